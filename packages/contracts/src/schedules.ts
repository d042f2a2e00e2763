// Cron schedules (docs/reference/time.md#time-priority-and-fairness): which expressions and time zones a schedule may use, and when it ticks. The API
// checks a schedule with it when it is saved and computes next_run_at; the worker's ticker computes which tick
// is due. croner does the calendar and time-zone work; this module narrows it to classic five-field cron and
// words the refusals. Pure: the instants come in as arguments.
import { Cron, type CronOptions } from "croner";

/** The zone a schedule is read in when none is given. */
export const SCHEDULE_TIMEZONE_DEFAULT = "UTC";
/** Longest accepted cron expression and time-zone name. */
export const CRON_MAX_LENGTH = 200;
export const TIMEZONE_MAX_LENGTH = 64;
/** How many upcoming ticks the console shows. */
export const UPCOMING_TICKS = 5;

/** When a schedule ticks: its cron expression, read in its IANA time zone. */
export type ScheduleTiming = { cron: string; timezone: string };

export type Checked = { ok: true; value: string } | { ok: false; message: string };

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const FIELDS = [
  { name: "minute", min: 0, max: 59, names: [] as string[] },
  { name: "hour", min: 0, max: 23, names: [] },
  { name: "day-of-month", min: 1, max: 31, names: [] },
  { name: "month", min: 1, max: 12, names: MONTHS },
  // 0 and 7 are both Sunday.
  { name: "day-of-week", min: 0, max: 7, names: DAYS },
];
const FIVE = "minute hour day-of-month month day-of-week";
/** One list item: *, a value or a range, optionally with a step. Croner checks the rest (range order, steps). */
const ITEM = /^(\*|[0-9A-Z]+(-[0-9A-Z]+)?)(\/[0-9]+)?$/;

/**
 * croner's settings for every schedule. `5-part`: no seconds or years. `no-wildcard`: a job without `*` or a
 * step in minute and hour (e.g. `30 2 * * *`, `30 2,14 * * *`) runs once a day across DST changes — at the first
 * of a repeated time, and right after a skipped one; `*`/step jobs follow real time (see docs/decisions/2026-11-23-schedules.md).
 */
const cronOptions = (timezone: string): CronOptions => ({ mode: "5-part", timezone, fixedTimeRule: "no-wildcard", paused: true });

/**
 * The expression, normalised (single spaces), if it is a five-field cron that matches some date; else what is
 * wrong with it, worded to follow the field name ("cron has 60 in the minute field, which allows 0-59").
 */
export function checkCron(expression: string, now: Date = new Date()): Checked {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  const refuse = (message: string): Checked => ({ ok: false, message });
  if (fields.length === 0) return refuse(`is empty: write five fields, ${FIVE}`);
  if (fields[0]!.startsWith("@")) return refuse(`nicknames such as ${fields[0]} are not supported: write the five fields (${FIVE}), e.g. 0 0 * * * for daily`);
  if (fields.length !== 5) {
    const extra = fields.length > 5 ? ", without seconds or years" : "";
    return refuse(`has ${fields.length} field${fields.length === 1 ? "" : "s"}; a schedule takes five (${FIVE})${extra}`);
  }
  for (const [i, field] of FIELDS.entries()) {
    for (const item of fields[i]!.toUpperCase().split(",")) {
      const shape = ITEM.exec(item);
      const takes = `${field.min}-${field.max}${field.names.length ? ` or ${field.names[0]}-${field.names[field.names.length - 1]}` : ""}`;
      if (!shape) {
        return refuse(`has "${item}" in the ${field.name} field, which takes *, ${takes}, lists (1,15), ranges (1-5) and steps (*/10) only`);
      }
      const values = (shape[1] === "*" ? [] : shape[1]!.split("-")).map((value) => (/^\d+$/.test(value) ? Number(value) : value));
      for (const value of values) {
        if (typeof value === "number" ? value < field.min || value > field.max : !field.names.includes(value)) {
          return refuse(`has ${typeof value === "number" ? value : `"${value}"`} in the ${field.name} field, which takes ${takes}`);
        }
      }
    }
  }
  const normalised = fields.join(" ");
  let next: Date | null;
  try {
    next = new Cron(normalised, cronOptions(SCHEDULE_TIMEZONE_DEFAULT)).nextRun(now);
  } catch (error) {
    return refuse(`is not a valid cron expression: ${(error as Error).message.replace(/^CronPattern:\s*/, "")}`);
  }
  // e.g. 0 0 30 2 *: every field is fine, but February has no 30th.
  if (!next) return refuse("never matches a date (such as the 30th of February)");
  return { ok: true, value: normalised };
}

/**
 * The zone as written, if the runtime's IANA database knows it (any case; links such as Asia/Kolkata, US/Eastern
 * or Etc/UTC too). It is not rewritten to ICU's canonical name, which is often the older one (Asia/Calcutta).
 * UTC offsets like +02:00 are refused, so a schedule always follows its place's DST rules.
 */
export function checkTimezone(zone: string): Checked {
  const refusal: Checked = { ok: false, message: "is not an IANA time zone name, such as UTC, Europe/Berlin or America/New_York" };
  if (zone.length > TIMEZONE_MAX_LENGTH || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return refusal;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return { ok: true, value: zone };
  } catch {
    return refusal;
  }
}

const cron = (timing: ScheduleTiming) => new Cron(timing.cron, cronOptions(timing.timezone));

/** The first tick strictly after `after`, or null when the expression matches no later date. */
export function nextTick(timing: ScheduleTiming, after: Date): Date | null {
  return cron(timing).nextRun(after);
}

/** The next `count` ticks strictly after `after`, in order (what the console shows). */
export function nextTicks(timing: ScheduleTiming, after: Date, count = UPCOMING_TICKS): Date[] {
  return cron(timing).nextRuns(count, after);
}

/** The latest tick at or before `atOrBefore` (after an outage, the only missed tick that runs), or null. */
export function latestTick(timing: ScheduleTiming, atOrBefore: Date): Date | null {
  // croner's previousRuns() looks strictly before its reference; ticks are whole minutes, so 1 ms later is "at or before".
  return cron(timing).previousRuns(1, new Date(atOrBefore.getTime() + 1))[0] ?? null;
}
