// GET /queues/activity (issue 38): the Queues page's per-queue charts — attempts started and their wait from due to
// start, per minute over the last hour. Declared before PATCH /queues/{type}, whose path would take "activity".
import { QUEUE_ACTIVITY_EVENTS, QUEUE_ACTIVITY_MINUTES } from "@conveyor/db";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { getQueueActivity } from "../services/queue-activity";

const minutes = ["2026-11-21T09:28:00.000Z", "2026-11-21T09:29:00.000Z", "2026-11-21T09:30:00.000Z"];

export const queueActivityEndpoints = [
  endpoint({
    method: "get",
    path: "/queues/activity",
    operationId: "getQueueActivity",
    tag: "Flow control",
    summary: "Starts and waits per queue, minute by minute",
    description:
      `Per job type your organization can use, over the last ${QUEUE_ACTIVITY_MINUTES} minutes (the current one last): attempts started in ` +
      "each minute, and their mean and 95th-percentile wait from due (run_at, a retry's time, else creation) to start. Read from " +
      `your newest ${QUEUE_ACTIVITY_EVENTS} events: when the hour held more, \`covered_from\` is the first minute they cover whole ` +
      "and earlier minutes are null (unknown, not quiet).",
    access: "job",
    responses: {
      200: {
        description: "One series per queue, one value per minute.",
        json: {
          component: "QueueActivity",
          example: {
            minutes,
            covered_from: null,
            queues: [{ type: "send_email", started: [0, 12, 9], wait_avg_ms: [null, 140, 95], wait_p95_ms: [null, 410, 230] }],
          },
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS],
    async handle({ caller }, deps) {
      return { json: await getQueueActivity({ caller }, deps) };
    },
  }),
];
