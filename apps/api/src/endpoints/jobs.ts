// Enqueueing one job (POST /jobs, docs/reference/lifecycle.md#lifecycle): a user token or an API key, any role, always scoped to the caller's
// organization. The batch, the reads and the steering of jobs have their own files (job-batch, job-reads, job-steering).
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { jobExamples } from "../openapi/job-types";
import { ref } from "../declarations/json-schema";
import { createJob } from "../services/jobs";
import { JOB_ID } from "./job-examples";
import { idempotencyKeyHeader, jobInput } from "../declarations/job-fields";

const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests per second allowed for your organization (API_RATE_LIMIT_PER_SEC).", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current second.", schema: { type: "integer" } },
};

export const jobEndpoints = [
  endpoint({
    method: "post",
    path: "/jobs",
    operationId: "createJob",
    tag: "Jobs",
    summary: "Enqueue a job",
    description:
      "Validates the payload against its type's schema and stores the job in Postgres, which is all a 202 promises: the " +
      "workers' dispatcher hands it to a worker once it is due, so it answers 202 even while Redis is away. With " +
      "`Idempotency-Key`, a repeat of the same request within 24 h returns the " +
      "first job with 200 and creates nothing; the same key with another body is 409 `idempotency_conflict`. With `depends_on` it " +
      "waits for those jobs (waiting_for: dependencies) and is due once all are done; the answer's status is cancelled when one " +
      "of them had already failed or been cancelled (unless on_dependency_failure is run).",
    access: "job",
    headers: [
      idempotencyKeyHeader("Any visible ASCII string, unique per intended job; kept 24 hours per organization.", {
        type: "string",
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
        pattern: "^[\\x21-\\x7e]+$",
      }),
    ],
    body: { schema: jobInput, document: ref("NewJob"), examples: jobExamples() },
    responses: {
      202: { description: "Created and queued.", json: { component: "JobAccepted", example: { id: JOB_ID, status: "pending" } }, headers: rateLimitHeaders },
      200: {
        description: "An idempotent repeat: the job the first request created, as it is now.",
        json: { component: "JobAccepted", example: { id: JOB_ID, status: "processing" } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 409, 413, 415, 429],
    async handle({ caller, body, headers }, deps) {
      const { created, job } = await createJob({ caller, input: body, idempotencyKey: headers["idempotency-key"] }, deps);
      return { status: created ? 202 : 200, json: job };
    },
  }),
];
