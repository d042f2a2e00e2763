// The Workers view's endpoint (issue 38): GET /workers, the deployment's worker processes from the worker registry.
// Like GET /queues, any credential of the organization reads it (a service may watch its capacity); workers are
// shared by the deployment, so each shows only the caller's own jobs, and other work as a count of busy slots.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { getWorkers } from "../services/workers";

const AT = "2026-11-21T09:30:00.000Z";
const workerExample = {
  id: "019a8c3e-4f10-7c2a-9d61-3b5e2a7f9c01",
  host: "worker-general-7d9f8b6c5-x2k4p",
  pid: 1,
  version: "0.1.0",
  node_version: "v24.11.1",
  types: ["send_email", "webhook"],
  concurrency: 10,
  slots: 20,
  busy_slots: 7,
  other_busy_slots: 5,
  state: "running",
  started_at: AT,
  heartbeat_at: "2026-11-21T10:12:04.518Z",
  heartbeat_ms: 5000,
  jobs: [
    { id: "019a8c52-1b77-7e01-8a3c-5d2f6e9b1a44", type: "send_email", started_at: "2026-11-21T10:12:03.902Z" },
    { id: "019a8c52-1c02-7a9e-b1f0-2c7d8e4a6b10", type: "webhook", started_at: "2026-11-21T10:12:04.011Z" },
  ],
};

export const workerEndpoints = [
  endpoint({
    method: "get",
    path: "/workers",
    operationId: "listWorkers",
    tag: "Workers",
    summary: "List worker processes",
    description:
      "The deployment's worker processes as the worker registry in Postgres knows them: each one's host and pid, the job types it serves, " +
      "its concurrency and slots, its busy slots and the jobs of your organization it runs, as of its last heartbeat (every " +
      "WORKER_HEARTBEAT_MS, 5 s by default). A worker that stopped gracefully is gone from the list; one silent for three heartbeats " +
      "(killed, or its host lost) is `gone` for 15 minutes, then removed. Work of other organizations shows only as a count of busy slots. " +
      "Running workers first, then by host and pid.",
    access: "job",
    // No query parameters: an unknown one (a filter this endpoint does not have) is a 400, not silently ignored.
    query: Joi.object({}),
    responses: { 200: { description: "The worker processes.", json: { component: "Worker", array: true, example: [workerExample] } } },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller }, deps) {
      return { json: await getWorkers({ caller }, deps) };
    },
  }),
];
