import { COMMIT_LATENCY_MIN_SAMPLES, COMMIT_LATENCY_WINDOW_MS, CommitLatency } from "./commit-latency";

describe("CommitLatency", () => {
  let now = 1_000_000;
  const clock = () => now;

  it("answers no p99 with fewer inserts than the minimum, then the 99th percentile of the window's inserts", () => {
    const latency = new CommitLatency(clock);
    for (let i = 0; i < COMMIT_LATENCY_MIN_SAMPLES - 1; i++) latency.record(500);
    expect(latency.p99()).toBeNull();
    for (let i = 0; i < 191; i++) latency.record(10);
    // 200 samples: 9 of 500 ms, so the 198th smallest (the p99) is 500.
    expect(latency.p99()).toBe(500);
    for (let i = 0; i < 800; i++) latency.record(10);
    // 1,000 samples, 9 slow: the p99 (990th) is fast.
    expect(latency.p99()).toBe(10);
  });

  it("forgets inserts older than the window", () => {
    const latency = new CommitLatency(clock);
    for (let i = 0; i < 20; i++) latency.record(900);
    now += COMMIT_LATENCY_WINDOW_MS + 1;
    for (let i = 0; i < 20; i++) latency.record(5);
    expect(latency.p99()).toBe(5);
    now += COMMIT_LATENCY_WINDOW_MS + 1;
    expect(latency.p99()).toBeNull();
  });
});
