// The Workers view's endpoint (issue 38, docs/reference/time.md#alerts): GET /workers, the deployment's worker processes from the worker
// registry. Like GET /queues, any credential of the organization reads it (a service may watch its capacity). On a
// shared deployment a tenant sees the deployment's workers only as capacity per type it uses; with
// WORKERS_VISIBLE_TO_ORGS=true each worker in full, showing only the caller's own jobs and other work as a count.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { getWorkers } from "../services/workers";

const capacityExample = {
  kind: "capacity",
  type: "send_email",
  workers: 3,
  slots: 30,
  jobs: [{ id: "019a8c52-1b77-7e01-8a3c-5d2f6e9b1a44", type: "send_email", started_at: "2026-11-21T10:12:03.902Z" }],
};

export const workerEndpoints = [
  endpoint({
    method: "get",
    path: "/workers",
    operationId: "listWorkers",
    tag: "Workers",
    summary: "List worker processes",
    description:
      "On a shared deployment (the default), the deployment's workers as capacity for each job type your organization used in the last " +
      "30 days or has a schedule for (`kind: capacity`: live processes serving it, their slots, your jobs of it running) — no host name, " +
      "pid or version. With the operator's WORKERS_VISIBLE_TO_ORGS=true (a single-company deployment), each worker process in full " +
      "(`kind: worker`): " +
      "the deployment's worker processes as the worker registry in Postgres knows them: each one's host and pid, the job types it serves, " +
      "its concurrency and slots, its busy slots and the jobs of your organization it runs, as of its last heartbeat (every " +
      "WORKER_HEARTBEAT_MS, 5 s by default). A worker that stopped gracefully is gone from the list; one silent for three heartbeats " +
      "(killed, or its host lost) is `gone` for 15 minutes, then removed. Work of other organizations shows only as a count of busy slots. " +
      "Running workers first, then by host and pid.",
    access: "job",
    // No query parameters: an unknown one (a filter this endpoint does not have) is a 400, not silently ignored.
    query: Joi.object({}),
    responses: { 200: { description: "The worker processes.", json: { component: "WorkerListItem", array: true, example: [capacityExample] } } },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller }, deps) {
      return { json: await getWorkers({ caller }, deps) };
    },
  }),
];
