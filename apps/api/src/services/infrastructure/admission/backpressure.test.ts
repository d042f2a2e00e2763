import { COMMIT_LATENCY_WINDOW_MS } from "./commit-latency";
import { Demand } from "./backpressure";

describe("Demand", () => {
  let now = 1_000_000;
  const clock = () => now;

  it("ranks the organizations by what they asked for over about the window, refused requests included", () => {
    const demand = new Demand(clock);
    for (let i = 0; i < 30; i++) demand.asked("flood");
    demand.asked("quiet");
    now += COMMIT_LATENCY_WINDOW_MS / 2;
    for (let i = 0; i < 5; i++) demand.asked("flood");
    demand.asked("other");
    expect(demand.byOrg()).toEqual([
      { orgId: "flood", due: 35 },
      { orgId: "other", due: 1 },
      { orgId: "quiet", due: 1 },
    ]);
    now += COMMIT_LATENCY_WINDOW_MS / 2;
    demand.asked("quiet");
    expect(demand.byOrg()).toEqual([
      { orgId: "flood", due: 5 },
      { orgId: "other", due: 1 },
      { orgId: "quiet", due: 1 },
    ]);
    now += 2 * COMMIT_LATENCY_WINDOW_MS;
    expect(demand.byOrg()).toEqual([]);
  });
});
