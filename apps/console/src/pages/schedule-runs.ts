// A schedule's next runs, as the schedule form shows them while its cron and time zone are typed: the same five
// fields and zones the API's scheduler reads (croner), each run written in the schedule's own zone.
import { Cron } from "croner";

/** The time zones a schedule can be in: UTC first, then every zone the browser knows. */
export const zones = (() => {
  const supported = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return ["UTC", ...supported.filter((zone) => zone !== "UTC")];
})();

/** The next `count` runs of `cron` in `timezone`, or why there are none. */
export function upcomingRuns(cron: string, timezone: string, count = 5): { runs: Date[] } | { problem: string } {
  const fields = cron.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    return { problem: `it has ${fields.length} field${fields.length === 1 ? "" : "s"}; a schedule takes five (minute hour day-of-month month day-of-week)` };
  try {
    const runs = new Cron(fields.join(" "), { mode: "5-part", timezone, fixedTimeRule: "no-wildcard", paused: true }).nextRuns(count);
    return runs.length ? { runs } : { problem: "it never matches a date" };
  } catch (error) {
    return { problem: (error as Error).message.replace(/^CronPattern:\s*/, "") };
  }
}

/** `date` written in `timeZone` (its ISO form when the zone is unknown). */
export function formatIn(date: Date, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "short", timeZone }).format(date);
  } catch {
    return date.toISOString();
  }
}
