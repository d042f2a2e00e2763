// The job endpoints (SPEC §5): JWT or API key, any role, always scoped to the caller's organization.
import { Router, type Response } from "express";
import Joi from "joi";
import { BATCH_LIMIT, IDEMPOTENCY_KEY_MAX_LENGTH, JOB_STATUSES, MAX_RETRIES_LIMIT, TYPE_NAME_PATTERN, type JobStatus } from "@conveyor/contracts";
import { isUuid, listJobsPage, streamJobs } from "@conveyor/db";
import { validationFailed } from "../http/errors";
import { validate } from "../http/validate";
import { principal } from "../middleware/authenticate";
import { createJobCatalog } from "../services/job-catalog";
import { JobWriter } from "../services/job-writer";
import { createJob, createJobs, getJob, getJobArtifact, getJobLogs, type JobInput, type JobsDeps } from "../services/jobs";
import type { RouteDeps } from "./index";

export const jobInput = Joi.object<JobInput>({
  type: Joi.string().pattern(TYPE_NAME_PATTERN, "job type name").required(),
  payload: Joi.object().unknown(true).required(),
  max_retries: Joi.number().integer().min(0).max(MAX_RETRIES_LIMIT).default(0),
});

export const batchInput = Joi.object<{ jobs: JobInput[] }>({
  jobs: Joi.array().items(jobInput).min(1).max(BATCH_LIMIT).required(),
});

export const listQuery = Joi.object<{ status?: JobStatus; limit?: number; cursor?: string }>({
  status: Joi.string()
    .valid(...JOB_STATUSES)
    .messages({ "any.only": `must be one of ${JOB_STATUSES.join(", ")}` }),
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(64),
});

export const idempotencyKey = Joi.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH).pattern(/^[\x21-\x7e]+$/, "visible ASCII characters");

/** Cursors are opaque to clients: the id of the last job of the previous page, base64url-encoded. */
const encodeCursor = (id: string) => Buffer.from(id, "utf8").toString("base64url");
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!isUuid(id)) throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  return id;
}

/** Resolves when `res` can take more, or is closed; removes both listeners either way. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
}

/** Writes the JSON array from an async source of JSON texts, in ~64 KiB chunks, honouring backpressure. */
async function writeJsonArray(res: Response, items: AsyncIterable<{ item: string }>): Promise<void> {
  res.status(200).type("application/json");
  let chunk = "[";
  let first = true;
  for await (const { item } of items) {
    if (res.destroyed) return;
    chunk += first ? item : `,${item}`;
    first = false;
    if (chunk.length >= 65_536) {
      const flushed = res.write(chunk);
      chunk = "";
      if (!flushed) await drained(res);
    }
  }
  res.end(`${chunk}]`);
}

export function jobRoutes(deps: RouteDeps): Router {
  const router = Router();
  const auth = deps.authenticate({ accept: ["jwt", "api_key"] });
  // Per-organization request rate; it lets requests through while Redis is away (ROBUSTNESS A1).
  const limit = deps.rateLimits.jobsByOrg;
  const jobs: JobsDeps = {
    ...deps,
    catalog: createJobCatalog(deps),
    writer: new JobWriter({ pool: deps.db.pool, queues: deps.queues, logger: deps.logger }),
  };

  router.post("/jobs", auth, limit, async (req, res) => {
    const input = validate(jobInput, req.body);
    const key = req.get("idempotency-key");
    if (key !== undefined) validate(idempotencyKey, key, "headers.idempotency-key");
    const { created, job } = await createJob(jobs, { principal: principal(req), input, idempotencyKey: key });
    res.status(created ? 202 : 200).json(job);
  });

  router.post("/jobs/batch", auth, limit, async (req, res) => {
    if (req.get("idempotency-key") !== undefined) {
      throw validationFailed([{ path: "headers.idempotency-key", message: "is supported on POST /jobs only" }]);
    }
    const { jobs: inputs } = validate(batchInput, req.body);
    res.status(202).json(await createJobs(jobs, { principal: principal(req), inputs }));
  });

  router.get("/jobs", auth, limit, async (req, res) => {
    const query = validate(listQuery, req.query, "query");
    const { orgId } = principal(req);
    if (query.limit === undefined) {
      if (query.cursor !== undefined) throw validationFailed([{ path: "query.cursor", message: "needs limit" }]);
      const stream = await streamJobs(deps.db.pool, { orgId, status: query.status });
      res.once("close", () => stream.release());
      try {
        await writeJsonArray(res, stream.rows);
      } catch (error) {
        // Headers are sent: a truncated array is the only honest signal left besides the log line.
        req.log.error("job list stream failed", { error });
        res.destroy();
      } finally {
        stream.release();
      }
      return;
    }
    const page = await listJobsPage(deps.db.pool, { orgId, status: query.status, limit: query.limit, before: query.cursor ? decodeCursor(query.cursor) : undefined });
    if (page.more) {
      const lastId = (JSON.parse(page.items[page.items.length - 1]!) as { id: string }).id;
      const next = new URLSearchParams({ ...(query.status ? { status: query.status } : {}), limit: String(query.limit), cursor: encodeCursor(lastId) });
      res.setHeader("Link", `<${deps.config.publicUrl}/jobs?${next}>; rel="next"`);
    }
    res.status(200).type("application/json").send(`[${page.items.join(",")}]`);
  });

  router.get("/jobs/:id", auth, limit, async (req, res) => {
    res.json(await getJob(deps, { principal: principal(req), id: String(req.params.id) }));
  });

  router.get("/jobs/:id/logs", auth, limit, async (req, res) => {
    res.json(await getJobLogs(deps, { principal: principal(req), id: String(req.params.id) }));
  });

  router.get("/jobs/:id/artifact", auth, limit, async (req, res) => {
    const artifact = await getJobArtifact(deps, { principal: principal(req), id: String(req.params.id) });
    const filename = artifact.filename.replace(/[^\w.\-]/g, "_");
    res
      .status(200)
      .type(artifact.contentType)
      .setHeader("Content-Disposition", `attachment; filename="${filename}"`)
      .setHeader("Content-Length", String(artifact.data.length))
      .end(artifact.data);
  });

  return router;
}
