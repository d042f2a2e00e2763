// What a schedule's due turn does (docs/reference/time.md#alerts): which ticks get a run, given its overlap and catch-up policies and
// whether its last run is still pending or running. Pure — the ticker (packages/db/src/schedules) reads the row and
// the last run's status, calls this, and writes what it answers in the same transaction. Also the range of ticks a
// backfill makes, and the next run times in the schedule's zone with its offset.
import { latestTick, nextTick, nextTicks, type ScheduleTiming } from "./schedules";

export const SCHEDULE_OVERLAPS = ["allow", "skip", "buffer_one"] as const;
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];
export const SCHEDULE_CATCH_UPS = ["none", "latest", "all"] as const;
export type ScheduleCatchUp = (typeof SCHEDULE_CATCH_UPS)[number];

/** catch_up none: a tick found later than this after its time was missed (downtime), and does not run. */
export const CATCH_UP_NONE_GRACE_MS = 60_000;
/** catch_up all: the window's bounds and its default. */
export const CATCH_UP_WINDOW_MIN_SECONDS = 60;
export const CATCH_UP_WINDOW_MAX_SECONDS = 7 * 86_400;
export const CATCH_UP_WINDOW_DEFAULT_SECONDS = 86_400;
/** catch_up all: runs made per schedule per turn; the rest stay due for the next turn (a second later). */
export const CATCH_UP_RUNS_PER_TURN = 100;
/** Most runs one backfill request makes (a year of a daily schedule; a bit over a month of an hourly one). */
export const BACKFILL_MAX_RUNS = 1_000;

export type SchedulePolicy = ScheduleTiming & { overlap: ScheduleOverlap; catchUp: ScheduleCatchUp; catchUpWindowSeconds: number | null };

export type ScheduleTurnState = {
  /** The first tick not yet handled (the stored next_run_at). */
  nextRunAt: Date | null;
  /** The last tick that got a run. */
  lastRunAt: Date | null;
  /** The tick held back by buffer_one while the last run was active. */
  bufferedRunAt: Date | null;
  /** The last run's job is pending or running. */
  lastActive: boolean;
};

export type ScheduleTurn = {
  /** Ticks that get a run now, oldest first. */
  runs: Date[];
  nextRunAt: Date | null;
  bufferedRunAt: Date | null;
  /** Ticks passed over (skip while active, buffer_one's older ones, catch_up none), for the log. */
  dropped: number;
};

/** The due ticks by the catch-up policy: those in [nextRunAt, now], and whether more remain for the next turn. */
function dueTicks(policy: SchedulePolicy, state: ScheduleTurnState, now: Date): { ticks: Date[]; missed: number; resumeAt: Date | null } {
  if (!state.nextRunAt || state.nextRunAt > now) return { ticks: [], missed: 0, resumeAt: null };
  // The first unhandled tick: next_run_at is one, except when something moved it between ticks (an edit, a test).
  const from = latestTick(policy, state.nextRunAt) ?? state.nextRunAt;
  const fresh = (t: Date) => t >= from && (!state.lastRunAt || t > state.lastRunAt);
  if (policy.catchUp !== "all") {
    const latest = latestTick(policy, now);
    if (!latest || !fresh(latest)) return { ticks: [], missed: 0, resumeAt: null };
    if (policy.catchUp === "none" && now.getTime() - latest.getTime() > CATCH_UP_NONE_GRACE_MS) return { ticks: [], missed: 1, resumeAt: null };
    return { ticks: [latest], missed: 0, resumeAt: null };
  }
  const window = (policy.catchUpWindowSeconds ?? CATCH_UP_WINDOW_DEFAULT_SECONDS) * 1000;
  const start = new Date(Math.max(from.getTime(), now.getTime() - window) - 1);
  const ticks: Date[] = [];
  let cursor = nextTick(policy, start);
  while (cursor && cursor <= now && ticks.length < CATCH_UP_RUNS_PER_TURN) {
    if (fresh(cursor)) ticks.push(cursor);
    cursor = nextTick(policy, cursor);
  }
  // Capped: the next turn goes on from the first tick not taken.
  return { ticks, missed: 0, resumeAt: cursor && cursor <= now ? cursor : null };
}

/** A schedule's turn: its runs now, its next next_run_at and what buffer_one holds. */
export function planScheduleTurn(policy: SchedulePolicy, state: ScheduleTurnState, now: Date): ScheduleTurn {
  const due = dueTicks(policy, state, now);
  const nextRunAt = due.resumeAt ?? (state.nextRunAt && state.nextRunAt <= now ? nextTick(policy, now) : state.nextRunAt);
  const candidates = [...(state.bufferedRunAt ? [state.bufferedRunAt] : []), ...due.ticks];
  if (policy.overlap === "allow") return { runs: candidates, nextRunAt, bufferedRunAt: null, dropped: due.missed };
  if (state.lastActive) {
    // One at a time: skip passes over every due tick; buffer_one keeps the newest for when the last run ends.
    if (policy.overlap === "skip") return { runs: [], nextRunAt, bufferedRunAt: null, dropped: due.missed + candidates.length };
    return { runs: [], nextRunAt, bufferedRunAt: candidates.at(-1) ?? null, dropped: due.missed + Math.max(0, candidates.length - 1) };
  }
  const [first, ...rest] = candidates;
  if (!first) return { runs: [], nextRunAt, bufferedRunAt: null, dropped: due.missed };
  if (policy.overlap === "skip") return { runs: [first], nextRunAt, bufferedRunAt: null, dropped: due.missed + rest.length };
  return { runs: [first], nextRunAt, bufferedRunAt: rest.at(-1) ?? null, dropped: due.missed + Math.max(0, rest.length - 1) };
}

/** The ticks of [from, to] (both included), oldest first, at most `max` + 1 (so a caller can tell it is too many). */
export function ticksBetween(timing: ScheduleTiming, from: Date, to: Date, max = BACKFILL_MAX_RUNS): Date[] {
  const ticks: Date[] = [];
  let cursor = nextTick(timing, new Date(from.getTime() - 1));
  while (cursor && cursor <= to && ticks.length <= max) {
    ticks.push(cursor);
    cursor = nextTick(timing, cursor);
  }
  return ticks;
}

/** An instant as ISO 8601 in `timezone` with its offset then, e.g. 2026-12-07T09:00:00.000+01:00. */
export function isoInZone(at: Date, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "longOffset",
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === "GMT" ? "+00:00" : parts.timeZoneName!.replace("GMT", "");
  const ms = String(at.getUTCMilliseconds()).padStart(3, "0");
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${ms}${offset}`;
}

/** The next `count` run times after `after`, in the schedule's zone with its offset (GET /schedules/{id}'s next_runs). */
export function nextRunsInZone(timing: ScheduleTiming, after: Date, count = 5): string[] {
  return nextTicks(timing, after, count).map((t) => isoInZone(t, timing.timezone));
}
