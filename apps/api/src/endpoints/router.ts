// The Express router of a list of endpoint declarations: for each, the per-IP limit of public auth endpoints,
// the credential and role checks, the per-organization limit of job endpoints, input validation, the handler,
// and its reply. A known path asked with another method (OPTIONS included) is 405 with `Allow`.
import { Router, type RequestHandler, type Response } from "express";
import type { Endpoint, Reply } from "../declarations/endpoint";
import type { EndpointRegistry } from "../declarations/registry";
import { requireRole } from "../middleware/authenticate";
import type { RouterDeps } from "../middleware/deps";
import { AppError } from "../services/infrastructure/errors";
import { validate } from "../services/infrastructure/validate";

export function buildRouter(endpoints: EndpointRegistry, deps: RouterDeps): Router {
  const router = Router();
  const methodsByPath = new Map<string, string[]>();
  for (const e of endpoints.served(deps.config)) {
    methodsByPath.set(e.path, [...(methodsByPath.get(e.path) ?? []), e.method.toUpperCase()]);
    router[e.method](e.path, ...guards(e, deps), handler(e, deps));
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.join(", ");
    router.all(path, (req, res, next) => {
      res.setHeader("Allow", allow);
      next(new AppError("method_not_allowed", `${req.method} is not supported on ${path}; use ${allow}.`));
    });
  }
  return router;
}

function guards(e: Endpoint, deps: RouterDeps): RequestHandler[] {
  const chain: RequestHandler[] = [];
  if (e.limit) chain.push(deps.rateLimits.authByIp(e.limit));
  if (e.access !== "public") chain.push(deps.authenticate(e.access));
  if (e.roles) chain.push(requireRole(...e.roles));
  // Per organization, so after the credential; it lets requests through while Redis is away (docs/reference/robustness.md#r1).
  if (e.access === "job" || e.access === "job_read") chain.push(deps.rateLimits.jobsByOrg);
  return chain;
}

function handler(e: Endpoint, deps: RouterDeps): RequestHandler {
  return async (req, res) => {
    const headers: Record<string, string | undefined> = {};
    for (const header of e.headers ?? []) {
      const name = header.name.toLowerCase();
      const value = req.get(name);
      headers[name] = value === undefined ? undefined : validate(header.schema, value, `headers.${name}`);
    }
    // `unknown`, not Express' `any`: the body reaches the handler through validate(), or as sent when unchecked.
    const body: unknown = req.body;
    // Before the handler writes: whoever changes something reads from the primary for a while (read-your-writes).
    if (req.auth && req.method !== "GET" && req.method !== "HEAD") await deps.reads.wrote(req.auth);
    const reply = await e.handle(
      {
        caller: req.auth,
        params: req.params as Record<string, string>,
        query: e.query && !Array.isArray(e.query) ? validate(e.query, req.query, "query") : {},
        body: e.body ? (e.body.unchecked ? body : validate(e.body.schema, body === undefined && e.body.optional ? {} : body)) : undefined,
        headers,
        req,
        res,
      },
      deps,
    );
    if (reply) await send(res, reply);
  };
}

async function send(res: Response, reply: Reply): Promise<void> {
  if ("json" in reply) {
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    res.status(reply.status ?? 200).json(reply.json);
  } else if ("jsonArray" in reply) {
    // A client that goes away releases the source at once (a database cursor holds a connection).
    if (reply.release) res.once("close", () => reply.release?.());
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    try {
      await writeJsonArray(res, reply.status ?? 200, reply.jsonArray);
    } catch (error) {
      // Headers are sent: a truncated array is the only honest signal left besides the log line.
      res.req.log.error("streamed response failed", { error });
      res.destroy();
    } finally {
      reply.release?.();
    }
  } else if ("file" in reply) {
    const filename = reply.file.filename.replace(/[^\w.-]/g, "_");
    res
      .status(reply.status ?? 200)
      .type(reply.file.contentType)
      .setHeader("Content-Disposition", `attachment; filename="${filename}"`)
      .setHeader("Content-Length", String(reply.file.data.length))
      .end(reply.file.data);
  } else if ("location" in reply) {
    res.redirect(reply.status, reply.location);
  } else {
    res.status(reply.status).end();
  }
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

/** Writes a JSON array from already serialised items, in ~64 KiB chunks, honouring backpressure. */
async function writeJsonArray(res: Response, status: number, items: AsyncIterable<string> | Iterable<string>): Promise<void> {
  res.status(status).type("application/json");
  let chunk = "[";
  let first = true;
  for await (const item of items) {
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
