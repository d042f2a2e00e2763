// Schedules (docs/reference/time.md#time-priority-and-fairness): a cron expression, its time zone and the job each tick creates. Access as for jobs: a
// user token or an API key, any role, always scoped to the caller's organization.
import Joi from "joi";
import { CRON_MAX_LENGTH, SCHEDULE_TIMEZONE_DEFAULT, TIMEZONE_MAX_LENGTH } from "@conveyor/contracts";
import type { JobTemplate } from "@conveyor/db";
import { AUTHENTICATED_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { payloadExamples } from "../openapi/job-types";
import { jsonSchema, withProperty } from "../declarations/json-schema";
import {
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

const createBody = Joi.object<ScheduleInput>({
  name: name.required(),
  cron: cron.required(),
  timezone: timezone.default(SCHEDULE_TIMEZONE_DEFAULT),
  job: job.required(),
  paused: paused.default(false),
});
const patchBody = Joi.object<SchedulePatch>({ name, cron, timezone, job, paused }).min(1).messages({ "object.min": "must change at least one field" });
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
  created_at: AT,
};

export const scheduleEndpoints = [
  endpoint({
    method: "post",
    path: "/schedules",
    operationId: "createSchedule",
    tag: "Schedules",
    summary: "Create a schedule",
    description:
      "Each tick of `cron`, read in `timezone`, creates one job from `job` (with `schedule_id` set), however many workers " +
      "run. After an outage only the latest missed tick runs. A time skipped by a DST change runs right after the gap; a " +
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
];
