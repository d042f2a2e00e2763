// Cron schedules: which expressions and zones are accepted (and how a refusal reads), and when a schedule ticks —
// next, latest, the next five — including both DST changes, checked against croner's real calendar.
import { checkCron, checkTimezone, latestTick, nextTick, nextTicks, type ScheduleTiming } from "@conveyor/contracts";

const iso = (dates: (Date | null)[]) => dates.map((d) => d?.toISOString() ?? null);
const at = (text: string) => new Date(text);

describe("checkCron", () => {
  it.each([
    ["* * * * *", "* * * * *"],
    ["*/15 9-17 * * MON-FRI", "*/15 9-17 * * MON-FRI"],
    ["0 0 1 jan,jul *", "0 0 1 jan,jul *"],
    ["0-59/20 0 * * 0,7", "0-59/20 0 * * 0,7"],
    ["  30   2 * *  *  ", "30 2 * * *"],
    ["0 0 29 2 *", "0 0 29 2 *"],
  ])("accepts %j (stored as %j)", (expression, stored) => {
    expect(checkCron(expression)).toEqual({ ok: true, value: stored });
  });

  it.each([
    ["", "is empty: write five fields, minute hour day-of-month month day-of-week"],
    ["0 * * * * *", "has 6 fields; a schedule takes five (minute hour day-of-month month day-of-week), without seconds or years"],
    ["0 0 * * * * 2027", "has 7 fields; a schedule takes five (minute hour day-of-month month day-of-week), without seconds or years"],
    ["* * * *", "has 4 fields; a schedule takes five (minute hour day-of-month month day-of-week)"],
    ["60 * * * *", "has 60 in the minute field, which takes 0-59"],
    ["1-70 * * * *", "has 70 in the minute field, which takes 0-59"],
    ["0 24 * * *", "has 24 in the hour field, which takes 0-23"],
    ["0 0 0 * *", "has 0 in the day-of-month field, which takes 1-31"],
    ["0 0 32 * *", "has 32 in the day-of-month field, which takes 1-31"],
    ["0 0 * 13 *", "has 13 in the month field, which takes 1-12 or JAN-DEC"],
    ["0 0 * * 8", "has 8 in the day-of-week field, which takes 0-7 or SUN-SAT"],
    ["0 0 * FOO *", 'has "FOO" in the month field, which takes 1-12 or JAN-DEC'],
    ["0 0 * * MON#2", 'has "MON#2" in the day-of-week field, which takes *, 0-7 or SUN-SAT, lists (1,15), ranges (1-5) and steps (*/10) only'],
    ["0 0 L * *", 'has "L" in the day-of-month field, which takes 1-31'],
    ["0 0 ? * *", 'has "?" in the day-of-month field, which takes *, 1-31, lists (1,15), ranges (1-5) and steps (*/10) only'],
    ["@daily", "nicknames such as @daily are not supported: write the five fields (minute hour day-of-month month day-of-week), e.g. 0 0 * * * for daily"],
  ])("refuses %j: %s", (expression, message) => {
    expect(checkCron(expression)).toEqual({ ok: false, message });
  });

  it("passes croner's own refusals on, without its prefix", () => {
    expect(checkCron("5-1 * * * *")).toEqual({ ok: false, message: "is not a valid cron expression: From value is larger than to value: '5-1'" });
    expect(checkCron("*/0 * * * *")).toEqual({ ok: false, message: "is not a valid cron expression: Syntax error, illegal stepping: 0" });
    expect(checkCron("5/5 * * * *")).toMatchObject({ ok: false, message: expect.stringMatching(/^is not a valid cron expression: .*'5\/5'/) });
  });

  it("refuses an expression that never matches a date", () => {
    expect(checkCron("0 0 30 2 *")).toEqual({ ok: false, message: "never matches a date (such as the 30th of February)" });
  });
});

describe("checkTimezone", () => {
  it.each(["UTC", "utc", "Etc/UTC", "Europe/Berlin", "europe/berlin", "America/Argentina/Buenos_Aires", "Asia/Kolkata", "US/Eastern", "Etc/GMT+2"])(
    "accepts %j, kept as written",
    (zone) => {
      expect(checkTimezone(zone)).toEqual({ ok: true, value: zone });
    },
  );

  it.each(["Mars/Olympus_Mons", "Europe/Berlinn", "+02:00", "UTC+2", "", " UTC", "Europe/../../etc/passwd", "A".repeat(65)])("refuses %j", (zone) => {
    expect(checkTimezone(zone)).toEqual({ ok: false, message: "is not an IANA time zone name, such as UTC, Europe/Berlin or America/New_York" });
  });
});

describe("ticks", () => {
  const hourly: ScheduleTiming = { cron: "0 * * * *", timezone: "UTC" };

  it("nextTick is strictly after the instant", () => {
    expect(iso([nextTick(hourly, at("2026-01-01T09:59:59.999Z"))])).toEqual(["2026-01-01T10:00:00.000Z"]);
    expect(iso([nextTick(hourly, at("2026-01-01T10:00:00.000Z"))])).toEqual(["2026-01-01T11:00:00.000Z"]);
  });

  it("latestTick is at or before the instant: after an outage, only the latest missed tick", () => {
    expect(iso([latestTick(hourly, at("2026-01-01T10:00:00.000Z"))])).toEqual(["2026-01-01T10:00:00.000Z"]);
    expect(iso([latestTick(hourly, at("2026-01-01T09:59:59.999Z"))])).toEqual(["2026-01-01T09:00:00.000Z"]);
    // Down from 06:30 to 10:20: the 07:00, 08:00, 09:00 and 10:00 ticks were missed; 10:00 is the one that runs.
    expect(iso([latestTick(hourly, at("2026-01-01T10:20:00.000Z"))])).toEqual(["2026-01-01T10:00:00.000Z"]);
    expect(iso([latestTick({ cron: "0 0 29 2 *", timezone: "UTC" }, at("2026-06-01T00:00:00Z"))])).toEqual(["2024-02-29T00:00:00.000Z"]);
  });

  it("nextTicks gives the next five in order, read in the schedule's zone", () => {
    const weekdays: ScheduleTiming = { cron: "0 9 * * MON-FRI", timezone: "America/New_York" };
    // Friday 2026-11-20, 15:00 in New York (EST, UTC−5).
    expect(iso(nextTicks(weekdays, at("2026-11-20T20:00:00Z")))).toEqual([
      "2026-11-23T14:00:00.000Z",
      "2026-11-24T14:00:00.000Z",
      "2026-11-25T14:00:00.000Z",
      "2026-11-26T14:00:00.000Z",
      "2026-11-27T14:00:00.000Z",
    ]);
    expect(nextTicks(weekdays, at("2026-11-20T20:00:00Z"), 2)).toHaveLength(2);
  });

  it("follows the zone's offset change: 09:00 in Berlin is 08:00Z in winter and 07:00Z in summer", () => {
    const nine: ScheduleTiming = { cron: "0 9 * * *", timezone: "Europe/Berlin" };
    expect(iso(nextTicks(nine, at("2026-03-27T12:00:00Z"), 3))).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
  });
});

describe("DST, in Europe/Berlin (2026: spring forward on 29 March 02:00→03:00, fall back on 25 October 03:00→02:00)", () => {
  const twoThirty: ScheduleTiming = { cron: "30 2 * * *", timezone: "Europe/Berlin" };

  it("a daily time that does not exist on the spring-forward day runs once, right after the gap (03:00 CEST)", () => {
    expect(iso(nextTicks(twoThirty, at("2026-03-27T12:00:00Z"), 4))).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // 02:30 does not exist: 03:00 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
      "2026-03-31T00:30:00.000Z",
    ]);
    expect(iso([latestTick(twoThirty, at("2026-03-29T12:00:00Z"))])).toEqual(["2026-03-29T01:00:00.000Z"]);
  });

  it("a daily time that occurs twice on the fall-back day runs once, at its first occurrence (02:30 CEST)", () => {
    expect(iso(nextTicks(twoThirty, at("2026-10-23T12:00:00Z"), 4))).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // the first 02:30 (CEST); the second (01:30Z, CET) does not run
      "2026-10-26T01:30:00.000Z", // 02:30 CET
      "2026-10-27T01:30:00.000Z",
    ]);
    // The ticker, asked during the repeated hour's second pass, does not find a second 02:30 to run.
    expect(iso([latestTick(twoThirty, at("2026-10-25T01:45:00Z"))])).toEqual(["2026-10-25T00:30:00.000Z"]);
  });

  it("a list of fixed times runs each once on the fall-back day too", () => {
    const twice: ScheduleTiming = { cron: "30 1,2 * * *", timezone: "Europe/Berlin" };
    expect(iso(nextTicks(twice, at("2026-10-24T20:00:00Z"), 4))).toEqual([
      "2026-10-24T23:30:00.000Z", // 25 Oct 01:30 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST, once
      "2026-10-26T00:30:00.000Z", // 26 Oct 01:30 CET
      "2026-10-26T01:30:00.000Z",
    ]);
  });

  it("an interval schedule follows real time: every 30 minutes through the repeated hour, none in the skipped one", () => {
    const halfHourly: ScheduleTiming = { cron: "*/30 * * * *", timezone: "Europe/Berlin" };
    // Fall back: 02:00, 02:30 CEST then 02:00, 02:30 CET — still every 30 minutes of real time.
    expect(iso(nextTicks(halfHourly, at("2026-10-25T00:10:00Z"), 5))).toEqual([
      "2026-10-25T00:30:00.000Z",
      "2026-10-25T01:00:00.000Z",
      "2026-10-25T01:30:00.000Z",
      "2026-10-25T02:00:00.000Z",
      "2026-10-25T02:30:00.000Z",
    ]);
    // Spring forward: 01:30 CET is followed by 03:00 CEST, 30 real minutes later.
    expect(iso(nextTicks(halfHourly, at("2026-03-29T00:10:00Z"), 3))).toEqual([
      "2026-03-29T00:30:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-29T01:30:00.000Z",
    ]);
  });
});
