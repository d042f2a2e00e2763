// Schedules (docs/reference/time.md#time-priority-and-fairness): a cron expression, its time zone and the job each tick creates. Access as for jobs: a
// user token or an API key, any role, always scoped to the caller's organization.
import Joi from "joi";
import {
  BACKFILL_MAX_RUNS,
  CATCH_UP_WINDOW_MAX_SECONDS,
  CATCH_UP_WINDOW_MIN_SECONDS,
  CRON_MAX_LENGTH,
  SCHEDULE_CATCH_UPS,
  SCHEDULE_OVERLAPS,
  SCHEDULE_TIMEZONE_DEFAULT,
  TIMEZONE_MAX_LENGTH,
} from "@conveyor/contracts";
import type { JobTemplate } from "@conveyor/db";
import { AUTHENTICATED_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { payloadExamples } from "../openapi/job-types";
import { jsonSchema, withProperty } from "../declarations/json-schema";
import {
  backfillSchedule,
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  updateSchedule,
  type ScheduleInput,
  type ScheduleListQuery,
  type SchedulePatch,
} from "../services/schedules";
import { jobInput, runFields } from "../declarations/job-fields";

const SCHEDULE_ID = "0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01";
const AT = "2026-11-21T09:30:00.000Z";

const name = Joi.string().trim().min(1).max(200).prefs({ convert: true });
const cron = Joi.string()
  .max(CRON_MAX_LENGTH)
  .description(
    "Five fields — minute hour day-of-month month day-of-week — with *, numbers, JAN–DEC and SUN–SAT, lists (1,15), " +
      "ranges (1-5) and steps (*/10); 0 and 7 are Sunday. No seconds, years, nicknames (@daily) or L, W, #, ?.",
  );
const timezone = Joi.string()
  .max(TIMEZONE_MAX_LENGTH)
  .description("An IANA time zone name (Europe/Berlin, America/New_York); the cron is read in it, DST included.");
/** The job each tick creates: POST /jobs' type, payload, max_retries and priority (run_at makes no sense here). */
const job = Joi.object<JobTemplate>({
  type: jobInput.extract("type"),
  payload: jobInput.extract("payload"),
  max_retries: jobInput.extract("max_retries"),
  priority: jobInput.extract("priority"),
  ...runFields,
})
  .with("concurrency_limit", "concurrency_key")
  .messages({ "object.with": "{{#main}} needs {{#peer}}" })
  .description("The job each tick creates, checked like a POST /jobs body (its payload against its type's schema) when the schedule is saved.");
const paused = Joi.boolean().description("A paused schedule creates no jobs; resuming it runs no tick missed meanwhile.");
const overlap = Joi.string()
  .valid(...SCHEDULE_OVERLAPS)
  .description(
    "While the last run is pending or running: allow (a new run each tick anyway), skip (no new run; the tick passes), " +
      "buffer_one (the newest tick is held and runs when the last run ends).",
  );
const catchUp = Joi.string()
  .valid(...SCHEDULE_CATCH_UPS)
  .description(
    "After downtime (the ticker not running): none (missed ticks do not run), latest (one run for them), all (a run for each " +
      "missed tick within catch_up_window_seconds, oldest first).",
  );
const catchUpWindow = Joi.number()
  .integer()
  .min(CATCH_UP_WINDOW_MIN_SECONDS)
  .max(CATCH_UP_WINDOW_MAX_SECONDS)
  .description("With catch_up all: how far back a missed tick still runs (default 86,400).");

const createBody = Joi.object<ScheduleInput>({
  name: name.required(),
  cron: cron.required(),
  timezone: timezone.default(SCHEDULE_TIMEZONE_DEFAULT),
  job: job.required(),
  paused: paused.default(false),
  overlap: overlap.default("allow"),
  catch_up: catchUp.default("latest"),
  catch_up_window_seconds: catchUpWindow,
});
const patchBody = Joi.object<SchedulePatch>({ name, cron, timezone, job, paused, overlap, catch_up: catchUp, catch_up_window_seconds: catchUpWindow })
  .min(1)
  .messages({ "object.min": "must change at least one field" });
const listQuery = Joi.object<ScheduleListQuery>({ limit: Joi.number().integer().min(1).max(1000), cursor: Joi.string().max(64) });

/** The document shows `job.payload` as the payload components of POST /jobs. */
const documented = (schema: Joi.ObjectSchema) =>
  withProperty(jsonSchema(schema), "job", (current) =>
    withProperty(current, "payload", (payload) => ({
      ...payload,
      description: "The payload its type takes: see NewJob's variants (SendEmailPayload, WebhookPayload, …); a plugin type takes any object.",
    })),
  );

const example = {
  id: SCHEDULE_ID,
  name: "Nightly report",
  cron: "30 2 * * *",
  timezone: "Europe/Berlin",
  job: { type: "send_email", payload: payloadExamples.send_email, max_retries: 3, priority: 5 },
  paused: false,
  next_run_at: "2026-11-22T01:30:00.000Z",
  last_run_at: null,
  overlap: "skip",
  catch_up: "latest",
  catch_up_window_seconds: null,
  next_runs: [
    "2026-11-22T02:30:00.000+01:00",
    "2026-11-23T02:30:00.000+01:00",
    "2026-11-24T02:30:00.000+01:00",
    "2026-11-25T02:30:00.000+01:00",
    "2026-11-26T02:30:00.000+01:00",
  ],
  created_at: AT,
};
const instant = Joi.string().isoDate().messages({ "string.isoDate": "must be an ISO 8601 date-time" });
const backfillBody = Joi.object<{ from: string; to: string }>({
  from: instant.required().description("The range's start (included), ISO 8601."),
  to: instant.required().description("The range's end (included), not in the future."),
});

export const scheduleEndpoints = [
  endpoint({
    method: "post",
    path: "/schedules",
    operationId: "createSchedule",
    tag: "Schedules",
    summary: "Create a schedule",
    description:
      "Each tick of `cron`, read in `timezone`, creates one job from `job` (with `schedule_id` set), however many workers " +
      "run. `overlap` says what a tick does while the last run is still pending or running, `catch_up` what runs after " +
      "downtime (by default the latest missed tick only). A time skipped by a DST change runs right after the gap; a " +
      "time that occurs twice runs once. The job is checked like a POST /jobs body now, not at the tick.",
    access: "job",
    body: {
      schema: createBody,
      document: documented(createBody),
      examples: {
        nightly: {
          summary: "An e-mail at 02:30 Berlin time every night",
          value: {
            name: example.name,
            cron: example.cron,
            timezone: example.timezone,
            job: { type: "send_email", payload: payloadExamples.send_email, max_retries: 3 },
            overlap: "skip",
          },
        },
        weekdays: {
          summary: "A webhook every 15 minutes during New York office hours",
          value: {
            name: "Office-hours sync",
            cron: "*/15 9-17 * * MON-FRI",
            timezone: "America/New_York",
            job: { type: "webhook", payload: payloadExamples.webhook },
          },
        },
      },
    },
    responses: { 201: { description: "The schedule, with its first tick in `next_run_at` (null when paused).", json: { component: "Schedule", example } } },
    errors: [400, ...AUTHENTICATED_ERRORS, 413, 415, 429],
    async handle({ caller, body, req }, deps) {
      const schedule = await createSchedule({ caller, input: body }, deps);
      req.log.info("schedule created", { scheduleId: schedule.id });
      return { status: 201, json: schedule };
    },
  }),
  endpoint({
    method: "get",
    path: "/schedules",
    operationId: "listSchedules",
    tag: "Schedules",
    summary: "List the organization's schedules",
    description: "Newest first. Without `limit`, all of them; with `limit`, one page and, while more remain, a `Link` header to the next one.",
    access: "job",
    query: listQuery,
    queryDescriptions: { limit: "Page size; without it every schedule is returned.", cursor: "Opaque; taken from the previous page's Link header." },
    responses: {
      200: {
        description: "The schedules.",
        json: { component: "Schedule", array: true, example: [example] },
        headers: { Link: { description: 'With `limit`, while more remain: `<…/schedules?limit=…&cursor=…>; rel="next"`.', schema: { type: "string" } } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query }, deps) {
      const list = await listSchedules({ caller, query }, deps);
      return { json: list.items, headers: list.next ? { Link: `<${deps.config.PUBLIC_URL}/schedules?${list.next}>; rel="next"` } : undefined };
    },
  }),
  endpoint({
    method: "get",
    path: "/schedules/:id",
    operationId: "getSchedule",
    tag: "Schedules",
    summary: "Get a schedule",
    access: "job",
    params: { id: idParam("schedule") },
    responses: { 200: { description: "The schedule.", json: { component: "Schedule", example } } },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      return { json: await getSchedule({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "patch",
    path: "/schedules/:id",
    operationId: "updateSchedule",
    tag: "Schedules",
    summary: "Change a schedule",
    description:
      "Any of name, cron, timezone, job (replaced whole) and paused; it takes effect before the next tick. Changing cron, " +
      "timezone or paused recomputes `next_run_at` from now: pausing clears it, and resuming runs no tick missed while paused.",
    access: "job",
    params: { id: idParam("schedule") },
    body: {
      schema: patchBody,
      document: documented(patchBody),
      examples: { pause: { summary: "Pause it", value: { paused: true } }, move: { summary: "Run at 06:00 instead", value: { cron: "0 6 * * *" } } },
    },
    responses: {
      200: { description: "The schedule as it is now.", json: { component: "Schedule", example: { ...example, paused: true, next_run_at: null } } },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 404, 413, 415, 429],
    async handle({ caller, params, body, req }, deps) {
      const schedule = await updateSchedule({ caller, id: params.id, patch: body }, deps);
      req.log.info("schedule changed", { scheduleId: schedule.id, fields: Object.keys(body) });
      return { json: schedule };
    },
  }),
  endpoint({
    method: "delete",
    path: "/schedules/:id",
    operationId: "deleteSchedule",
    tag: "Schedules",
    summary: "Delete a schedule",
    description: "No job is created for it after this answers. The jobs it made stay, with their `schedule_id`.",
    access: "job",
    params: { id: idParam("schedule") },
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params, req }, deps) {
      await deleteSchedule({ caller, id: params.id }, deps);
      req.log.info("schedule deleted", { scheduleId: params.id });
      return { status: 204 };
    },
  }),
  endpoint({
    method: "post",
    path: "/schedules/:id/backfill",
    operationId: "backfillSchedule",
    tag: "Schedules",
    summary: "Make the runs of a past range",
    description:
      `Creates a job for each tick of the schedule in [from, to] that has none yet — made by the ticker or an earlier backfill — ` +
      `so sending the same range again creates nothing (a day of an hourly schedule is 24 jobs once). The jobs are created now ` +
      `and run as capacity allows, whatever \`overlap\` says; all or nothing under the organization's quotas. At most ` +
      `${BACKFILL_MAX_RUNS} ticks per request.`,
    access: "job",
    params: { id: idParam("schedule") },
    body: {
      schema: backfillBody,
      examples: { day: { summary: "A day of an hourly schedule", value: { from: "2026-11-20T00:00:00Z", to: "2026-11-20T23:59:59Z" } } },
    },
    responses: {
      200: {
        description: "Every tick of the range with its job; `created` counts those made by this request.",
        json: {
          component: "ScheduleBackfill",
          example: { created: 1, runs: [{ tick: "2026-11-20T00:00:00.000Z", job_id: "0193a5c4-6666-7c1d-9f3a-2b8e4d6f1a02", created: true }] },
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 404, 413, 415, 429],
    async handle({ caller, params, body, req }, deps) {
      const result = await backfillSchedule({ caller, id: params.id, range: { from: new Date(body.from), to: new Date(body.to) } }, deps);
      req.log.info("schedule backfilled", { scheduleId: params.id, created: result.created });
      return { json: result };
    },
  }),
];
