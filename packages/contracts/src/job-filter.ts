// The job filters of docs/reference/lifecycle.md#steering, written once: GET /jobs takes them as query parameters, POST /jobs/bulk as its
// `filter` object, and the console builds its list from them. Values are strings in both places (a bulk filter
// is a query string written as JSON), so a list's filter can be copied into a bulk action as it is.
import Joi from "joi";
import { JOB_STATUSES, type JobStatus } from "./job-states";
import { SEARCH_VALUE_MAX_LENGTH, TYPE_NAME_PATTERN } from "./limits";

/** A failure group's id (GET /jobs/failures): 16 hex digits of the job's type and normalised error. */
export const FAILURE_GROUP_PATTERN = /^[0-9a-fA-F]{16}$/;

/** Jobs one POST /jobs/bulk acts on at most; `has_more` says to call again. */
export const BULK_LIMIT = 10_000;
/** Ids one POST /jobs/bulk may name. */
export const BULK_IDS_LIMIT = 1000;

/** The filters as a client writes them (query parameters, or the bulk `filter` object). */
export type JobFilterInput = {
  /** One status or several, comma-separated: `failed,cancelled`. */
  status?: string;
  type?: string;
  /** ISO 8601; jobs created at or after it. */
  created_after?: string;
  /** ISO 8601; jobs created before it. */
  created_before?: string;
  /** ISO 8601; jobs that finished (done, failed or cancelled) at or after it. */
  finished_after?: string;
  /** ISO 8601; jobs that finished before it. */
  finished_before?: string;
  schedule_id?: string;
  /** A job id, or a string or number value anywhere in the payload, matched exactly. */
  q?: string;
  /** A failure group of GET /jobs/failures: jobs whose last error is of that kind. */
  failure_group?: string;
  /** Pending jobs by when they are due: `now` (waiting to start) or `later` (run_at or a retry's wait ahead). */
  due?: string;
};

/** The filters as queries use them. Every field narrows the list; none set matches every job. */
export type JobFilter = {
  statuses?: JobStatus[];
  type?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  finishedAfter?: Date;
  finishedBefore?: Date;
  scheduleId?: string;
  q?: string;
  failureGroup?: string;
  due?: JobDue;
};

/** When pending jobs are due, as the overview counts them: `now` (Due now) and `later` (Delayed) split the pending. */
export const JOB_DUE = ["now", "later"] as const;
export type JobDue = (typeof JOB_DUE)[number];

const STATUS_MESSAGE = `must be one of ${JOB_STATUSES.join(", ")} (several comma-separated)`;

/** Comma-separated statuses (the pattern checked each) without repeats, in lifecycle order. */
function statusList(value: string): string {
  const given = value.split(",");
  return JOB_STATUSES.filter((s) => given.includes(s)).join(",");
}

// A date, or a date and time with its zone: a time without a zone would be read in the server's own zone.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

/** An ISO 8601 date (midnight UTC) or date-time with a zone, as a Date; null when it is not one, or not a real day. */
export function parseInstant(value: string): Date | null {
  const match = INSTANT.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Date.parse rolls 2026-02-31 over to March; a day the calendar does not have is refused instead.
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

function instant(value: string, helpers: Joi.CustomHelpers): string | Joi.ErrorReport {
  const date = parseInstant(value);
  return date ? date.toISOString() : helpers.message({ custom: "must be an ISO 8601 date (2026-11-21) or date-time with a zone (2026-11-21T09:30:00Z)" });
}

/** The rules of each filter, for an object schema of a query string or a request body. */
export const jobFilterFields = {
  status: Joi.string()
    .pattern(new RegExp(`^(${JOB_STATUSES.join("|")})(,(${JOB_STATUSES.join("|")}))*$`))
    .custom(statusList)
    .messages({ "string.empty": STATUS_MESSAGE, "string.pattern.base": STATUS_MESSAGE })
    .description(`${JOB_STATUSES.join(", ")}; several comma-separated (failed,cancelled). \`failed\` is the dead-letter view.`),
  type: Joi.string().pattern(TYPE_NAME_PATTERN, "job type name").description("A job type."),
  created_after: Joi.string().max(40).custom(instant).description("ISO 8601 date, or date-time with a zone: jobs created at or after it."),
  created_before: Joi.string().max(40).custom(instant).description("ISO 8601 date, or date-time with a zone: jobs created before it."),
  finished_after: Joi.string()
    .max(40)
    .custom(instant)
    .description("ISO 8601 date, or date-time with a zone: jobs that finished (done, failed or cancelled) at or after it."),
  finished_before: Joi.string().max(40).custom(instant).description("ISO 8601 date, or date-time with a zone: jobs that finished before it."),
  schedule_id: Joi.string().guid().description("Jobs made by this schedule."),
  q: Joi.string()
    .max(SEARCH_VALUE_MAX_LENGTH)
    // Postgres cannot hold a NUL in text; no payload value contains one either.
    .pattern(/^[^\0]*$/, "text without NUL characters")
    .description(
      `A job id or the last 8 characters of one (the short id the console shows), a string or number found anywhere in the payload (numbers as JSON writes them: 42, 19.9), or field:value — that value under a key named field, or at that dotted path (customer:Globex, items.0.sku:A-1) — each matched exactly, case too; a value ending in * after at least 3 characters is also a prefix (INV-20* finds INV-2024-001; customer:Glo* finds Globex under customer; IN* is only the literal value); a job matching any reading is found. At most ${SEARCH_VALUE_MAX_LENGTH} characters.`,
    ),

  failure_group: Joi.string()
    .pattern(FAILURE_GROUP_PATTERN, "failure group (16 hex digits, from GET /jobs/failures)")
    .description(
      "A failure group from GET /jobs/failures (16 hex digits): jobs whose last error is of that type and kind — the failed ones, and pending ones waiting to retry after such an error.",
    ),
  due: Joi.string()
    .valid(...JOB_DUE)
    .description(
      "Pending jobs by when they are due (the overview's Due now and Delayed): `now` — due and waiting to start (for a worker, other jobs or a limit); `later` — run_at or a retry's wait still ahead. Together they are every pending job.",
    ),
};

/** The filters alone (POST /jobs/bulk's `filter`); unknown names are refused. */
export const jobFilterSchema = Joi.object<JobFilterInput>(jobFilterFields);

/** A validated filter input as queries use it. */
export function toJobFilter(input: JobFilterInput): JobFilter {
  const filter: JobFilter = {};
  if (input.status) filter.statuses = input.status.split(",") as JobStatus[];
  if (input.type) filter.type = input.type;
  if (input.created_after) filter.createdAfter = new Date(input.created_after);
  if (input.created_before) filter.createdBefore = new Date(input.created_before);
  if (input.finished_after) filter.finishedAfter = new Date(input.finished_after);
  if (input.finished_before) filter.finishedBefore = new Date(input.finished_before);
  if (input.schedule_id) filter.scheduleId = input.schedule_id.toLowerCase();
  if (input.q !== undefined) filter.q = input.q;
  if (input.failure_group) filter.failureGroup = input.failure_group.toLowerCase();
  if (input.due) filter.due = input.due as JobDue;
  return filter;
}

/** The filter back as query parameters, in a fixed order and spelling (for Link headers, and to compare filters). */
export function jobFilterParams(filter: JobFilter): [string, string][] {
  const params: [string, string][] = [];
  if (filter.statuses?.length) params.push(["status", JOB_STATUSES.filter((s) => filter.statuses!.includes(s)).join(",")]);
  if (filter.type) params.push(["type", filter.type]);
  if (filter.createdAfter) params.push(["created_after", filter.createdAfter.toISOString()]);
  if (filter.createdBefore) params.push(["created_before", filter.createdBefore.toISOString()]);
  if (filter.finishedAfter) params.push(["finished_after", filter.finishedAfter.toISOString()]);
  if (filter.finishedBefore) params.push(["finished_before", filter.finishedBefore.toISOString()]);
  if (filter.scheduleId) params.push(["schedule_id", filter.scheduleId]);
  if (filter.q !== undefined) params.push(["q", filter.q]);
  if (filter.failureGroup) params.push(["failure_group", filter.failureGroup]);
  if (filter.due) params.push(["due", filter.due]);
  return params;
}
