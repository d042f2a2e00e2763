import { isoInZone, nextRunsInZone, planScheduleTurn, ticksBetween, type SchedulePolicy, type ScheduleTurnState } from "../src/schedule-plan";

const at = (iso: string) => new Date(iso);
const hourly = (extra: Partial<SchedulePolicy> = {}): SchedulePolicy => ({
  cron: "0 * * * *",
  timezone: "UTC",
  overlap: "allow",
  catchUp: "latest",
  catchUpWindowSeconds: null,
  ...extra,
});
const state = (extra: Partial<ScheduleTurnState> = {}): ScheduleTurnState => ({
  nextRunAt: at("2026-12-06T10:00:00Z"),
  lastRunAt: at("2026-12-06T09:00:00Z"),
  bufferedRunAt: null,
  lastActive: false,
  ...extra,
});
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe("planScheduleTurn", () => {
  it("runs the tick that is due now, and moves next_run_at to the tick after now", () => {
    const turn = planScheduleTurn(hourly(), state(), at("2026-12-06T10:00:00.020Z"));
    expect(iso(turn.runs)).toEqual(["2026-12-06T10:00:00.000Z"]);
    expect(turn.nextRunAt?.toISOString()).toBe("2026-12-06T11:00:00.000Z");
  });

  it.each([
    ["latest", null, ["2026-12-06T13:00:00.000Z"]],
    ["none", null, []],
    ["all", null, ["2026-12-06T10:00:00.000Z", "2026-12-06T11:00:00.000Z", "2026-12-06T12:00:00.000Z", "2026-12-06T13:00:00.000Z"]],
    ["all", 2 * 3600, ["2026-12-06T12:00:00.000Z", "2026-12-06T13:00:00.000Z"]],
  ] as const)("after downtime until 13:30, catch_up %s (window %s) runs %j", (catchUp, window, runs) => {
    const turn = planScheduleTurn(hourly({ catchUp, catchUpWindowSeconds: window }), state(), at("2026-12-06T13:30:00Z"));
    expect(iso(turn.runs)).toEqual(runs);
    expect(turn.nextRunAt?.toISOString()).toBe("2026-12-06T14:00:00.000Z");
  });

  it("catch_up none still runs a tick found within its grace (a slow turn is not downtime)", () => {
    expect(iso(planScheduleTurn(hourly({ catchUp: "none" }), state(), at("2026-12-06T10:00:30Z")).runs)).toEqual(["2026-12-06T10:00:00.000Z"]);
  });

  it("catch_up all over a long window takes a bounded number per turn and resumes from the first left", () => {
    const minutely = hourly({ cron: "* * * * *", catchUp: "all", catchUpWindowSeconds: 86_400 });
    const turn = planScheduleTurn(minutely, state({ nextRunAt: at("2026-12-06T10:00:00Z") }), at("2026-12-06T13:00:00Z"));
    expect(turn.runs).toHaveLength(100);
    expect(turn.nextRunAt?.toISOString()).toBe("2026-12-06T11:40:00.000Z");
  });

  it.each([
    ["allow", true, ["2026-12-06T10:00:00.000Z"], null],
    ["skip", true, [], null],
    ["buffer_one", true, [], "2026-12-06T10:00:00.000Z"],
    ["skip", false, ["2026-12-06T10:00:00.000Z"], null],
    ["buffer_one", false, ["2026-12-06T10:00:00.000Z"], null],
  ] as const)("overlap %s with the last run active=%s runs %j and buffers %s", (overlap, lastActive, runs, buffered) => {
    const turn = planScheduleTurn(hourly({ overlap }), state({ lastActive }), at("2026-12-06T10:00:00.020Z"));
    expect(iso(turn.runs)).toEqual(runs);
    expect(turn.bufferedRunAt?.toISOString() ?? null).toBe(buffered);
  });

  it("buffer_one runs the held tick once the last run ends, even between ticks, and keeps only the newest while it runs", () => {
    const policy = hourly({ overlap: "buffer_one" });
    const held = state({ nextRunAt: at("2026-12-06T11:00:00Z"), bufferedRunAt: at("2026-12-06T10:00:00Z") });
    expect(planScheduleTurn(policy, { ...held, lastActive: true }, at("2026-12-06T10:30:00Z")).runs).toEqual([]);
    const ended = planScheduleTurn(policy, held, at("2026-12-06T10:30:00Z"));
    expect(iso(ended.runs)).toEqual(["2026-12-06T10:00:00.000Z"]);
    expect(ended.bufferedRunAt).toBeNull();
    const newer = planScheduleTurn(policy, { ...held, lastActive: true }, at("2026-12-06T11:00:00.010Z"));
    expect(newer.bufferedRunAt?.toISOString()).toBe("2026-12-06T11:00:00.000Z");
  });
});

describe("ticksBetween and next runs in the zone", () => {
  it("lists a day of an hourly schedule as 24 ticks, both ends included", () => {
    expect(ticksBetween(hourly(), at("2026-12-01T00:00:00Z"), at("2026-12-01T23:59:59Z"))).toHaveLength(24);
    expect(ticksBetween(hourly(), at("2026-12-01T00:00:00Z"), at("2026-12-02T00:00:00Z"))).toHaveLength(25);
  });

  it("writes run times in the schedule's zone with its offset, across a DST change", () => {
    expect(isoInZone(at("2026-12-07T08:00:00Z"), "Europe/Berlin")).toBe("2026-12-07T09:00:00.000+01:00");
    expect(isoInZone(at("2026-12-07T08:00:00Z"), "UTC")).toBe("2026-12-07T08:00:00.000+00:00");
    expect(nextRunsInZone({ cron: "30 2 * * *", timezone: "America/New_York" }, at("2027-03-12T12:00:00Z"), 3)).toEqual([
      "2027-03-13T02:30:00.000-05:00",
      "2027-03-14T03:00:00.000-04:00",
      "2027-03-15T02:30:00.000-04:00",
    ]);
  });
});
