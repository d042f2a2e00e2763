// The Retries view's endpoints (issue 38): GET /jobs/retries, the jobs waiting to retry (declared before /jobs/{id},
// which would take "retries" for an id), and POST /jobs/{id}/run-now, a job due later made due now. Giving a retry
// up is POST /jobs/{id}/cancel.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { payloadExamples } from "../openapi/job-types";
import { detailExtra, listItem } from "./job-examples";
import { listRetrying, runJobNow } from "../services/retries";

export const RETRIES_LIMIT_MAX = 200;
const RETRIES_LIMIT_DEFAULT = 50;

/** A job waiting out its retry: the list item's example (jobs.ts) as such a job is. */
const item = {
  ...listItem,
  type: "webhook",
  status: "pending",
  retries: 2,
  max_retries: 5,
  updated_at: "2026-11-21T09:31:04.120Z",
  run_at: "2026-11-21T09:33:04.120Z",
  waiting_for: "retry",
  started_at: "2026-11-21T09:31:03.900Z",
  finished_at: null,
};

export const retryEndpoints = [
  endpoint({
    method: "get",
    path: "/jobs/retries",
    operationId: "listRetryingJobs",
    tag: "Jobs",
    summary: "Jobs waiting to retry",
    description:
      "The organization's jobs that failed an attempt and will try again: pending, with the last attempt's `error`, and " +
      "`next_attempt_at`, when the next attempt is due; soonest first. POST /jobs/{id}/run-now retries one at once, " +
      "POST /jobs/{id}/cancel gives it up.",
    access: "job",
    query: Joi.object<{ limit: number }>({
      limit: Joi.number().integer().min(1).max(RETRIES_LIMIT_MAX).default(RETRIES_LIMIT_DEFAULT),
    }),
    queryDescriptions: { limit: `Jobs at most, 1 to ${RETRIES_LIMIT_MAX} (default ${RETRIES_LIMIT_DEFAULT}); \`has_more\` says more wait.` },
    responses: {
      200: {
        description: "The jobs waiting to retry.",
        json: {
          component: "RetryingJobs",
          example: {
            items: [{ ...item, error: "The receiver answered HTTP 503", next_attempt_at: "2026-11-21T09:33:04.120Z" }],
            has_more: false,
          },
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query }, deps) {
      return { json: await listRetrying({ caller, limit: query.limit }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/jobs/:id/run-now",
    operationId: "runJobNow",
    tag: "Jobs",
    summary: "Run a delayed job, or retry a job, now",
    description:
      "A pending job that is due later — delayed by its `run_at`, or waiting out a retry's wait — is due at once: its " +
      "`run_at` becomes now and it starts as soon as a worker, its limits and its dependencies allow. The job's logs record " +
      "who asked; the change is announced as `job.updated`. A job that is already due, processing or finished is 409 `job_not_delayed`.",
    access: "job",
    params: { id: idParam("job") },
    responses: {
      200: {
        description: "The job as it is now: due.",
        json: {
          component: "Job",
          example: {
            ...detailExtra,
            ...item,
            waiting_for: null,
            payload: payloadExamples.webhook,
            result: null,
            error: "The receiver answered HTTP 503",
          },
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 409, 429],
    async handle({ caller, params, req }, deps) {
      const job = await runJobNow({ caller, id: params.id }, deps);
      req.log.info("job run now", { jobId: job.id });
      return { json: job };
    },
  }),
];
