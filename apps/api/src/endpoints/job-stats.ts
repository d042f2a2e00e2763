// GET /jobs/stats: the numbers of the console's overview. Declared before /jobs/{id}, which would take "stats" for an id.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { jobStats, type StatsWindow } from "../services/job-stats";

const statsQuery = Joi.object<{ window: StatsWindow }>({
  window: Joi.string().valid("hour", "day").default("hour").messages({ "any.only": "must be hour or day" }),
});

const zero = { created: 0, done: 0, failed: 0, cancelled: 0 };

export const jobStatsEndpoints = [
  endpoint({
    method: "get",
    path: "/jobs/stats",
    operationId: "getJobStats",
    tag: "Jobs",
    summary: "Job counts for charts",
    description:
      "The organization's jobs created and finished per minute over the last hour (`window=hour`, 60 buckets), or per 15 " +
      "minutes over the last day (`window=day`, 96 buckets), in all and by type; the share of finished jobs that failed; " +
      "and the queue right now. The last bucket runs to now. Counts of the last 30 seconds or so are read from the jobs " +
      "on each request; older minutes are counted once.",
    access: "job",
    query: statsQuery,
    queryDescriptions: { window: "`hour` (per minute) or `day` (per 15 minutes)." },
    responses: {
      200: {
        description: "The counts.",
        json: {
          component: "JobStats",
          example: {
            window: "hour",
            bucket_seconds: 60,
            buckets: [
              { start: "2026-11-21T08:31:00.000Z", ...zero, by_type: {} },
              {
                start: "2026-11-21T09:30:00.000Z",
                created: 42,
                done: 37,
                failed: 2,
                cancelled: 1,
                by_type: { send_email: { created: 40, done: 36, failed: 1, cancelled: 1 }, webhook: { created: 2, done: 1, failed: 1, cancelled: 0 } },
              },
            ],
            failure_rate: 0.0513,
            queue: { pending: 10, processing: 4, waiting_due: 3, delayed: 7 },
          },
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query }, deps) {
      return { json: await jobStats({ caller, window: query.window }, deps) };
    },
  }),
];
