import { stepAlert, type AlertState } from "../src/alerts";

const WINDOW = 60_000;
const t0 = new Date("2026-12-06T10:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

/** Runs observations every 10 s from t0; answers the changes with their times. */
function run(observations: boolean[]): { at: number; change: string }[] {
  let current: { state: AlertState; pendingSince: Date | null } = { state: "ok", pendingSince: null };
  const changes: { at: number; change: string }[] = [];
  observations.forEach((holds, i) => {
    const step = stepAlert(current, holds, at(i * 10_000), WINDOW);
    if (step.change) changes.push({ at: i * 10_000, change: step.change });
    current = step;
  });
  return changes;
}

describe("stepAlert", () => {
  it("fires once the condition has held for the whole window, and resolves once it has been clear as long", () => {
    const holding = Array.from({ length: 10 }, () => true);
    const clear = Array.from({ length: 10 }, () => false);
    expect(run([...holding, ...clear])).toEqual([
      { at: 60_000, change: "fired" },
      { at: 160_000, change: "resolved" },
    ]);
  });

  it("never fires for a condition that flaps faster than the window", () => {
    expect(run(Array.from({ length: 100 }, (_, i) => i % 3 !== 0))).toEqual([]);
  });

  it("notifies at most once per window however the condition flaps once it has fired", () => {
    const observations = [...Array.from({ length: 7 }, () => true), ...Array.from({ length: 60 }, (_, i) => i % 2 === 0)];
    const changes = run(observations);
    expect(changes).toEqual([{ at: 60_000, change: "fired" }]);
    for (let i = 1; i < changes.length; i++) expect(changes[i]!.at - changes[i - 1]!.at).toBeGreaterThanOrEqual(WINDOW);
  });
});
