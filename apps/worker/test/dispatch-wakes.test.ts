import { DispatchWakes } from "../src/dispatch/dispatch-wakes";

const TICK = 250;

/** Wakes whose first look at every type (always the first read) was taken at `at`. */
function lookedAtAllAt(at: number): DispatchWakes {
  const wakes = new DispatchWakes(TICK);
  expect(wakes.take(at)).toBeNull();
  return wakes;
}

describe("DispatchWakes", () => {
  it("looks at every type on the first read", () => {
    expect(new DispatchWakes(TICK).take(1_000)).toBeNull();
  });

  it("reads only the types new jobs were notified for, each once", () => {
    const wakes = lookedAtAllAt(1_000);
    wakes.add(["email"]);
    wakes.add(["pdf", "email"]);
    expect(wakes.take(1_010)?.sort()).toEqual(["email", "pdf"]);
  });

  it("looks at every type when any wake-up named no type, even among named ones", () => {
    const wakes = lookedAtAllAt(1_000);
    wakes.add(["email"]);
    wakes.add();
    wakes.add(["pdf"]);
    expect(wakes.take(1_010)).toBeNull();
  });

  it("looks at every type when nothing was named (the tick, a round run again)", () => {
    const wakes = lookedAtAllAt(1_000);
    expect(wakes.take(1_010)).toBeNull();
  });

  it("takes the wake-ups: what was named is read once", () => {
    const wakes = lookedAtAllAt(1_000);
    wakes.add(["email"]);
    expect(wakes.take(1_010)).toEqual(["email"]);
    expect(wakes.take(1_020)).toBeNull();
  });

  it("looks at every type at least once per tick, however many types are named", () => {
    const wakes = lookedAtAllAt(1_000);
    wakes.add(["email"]);
    expect(wakes.take(1_000 + TICK - 1)).toEqual(["email"]);
    wakes.add(["email"]);
    expect(wakes.take(1_000 + TICK)).toBeNull();
    wakes.add(["email"]);
    expect(wakes.take(1_000 + TICK + 1)).toEqual(["email"]);
  });

  it("looks at every type when a round planned to run again (a job falling due), a timer's early firing included", () => {
    const wakes = lookedAtAllAt(1_000);
    wakes.planned(100, 1_000);
    wakes.add(["email"]);
    expect(wakes.take(1_050)).toEqual(["email"]);
    wakes.add(["email"]);
    expect(wakes.take(1_099)).toBeNull();
  });

  it("plans nothing after a round that asked to be run only when woken", () => {
    const wakes = lookedAtAllAt(1_000);
    wakes.planned(100, 1_000);
    wakes.planned(null, 1_010);
    wakes.add(["email"]);
    expect(wakes.take(1_200)).toEqual(["email"]);
  });

  it("keeps the moment a limit frees found by the last look at every type through rounds that looked at some", () => {
    const wakes = new DispatchWakes(TICK);
    expect(wakes.limitsFree(5_000, true)).toBe(5_000);
    expect(wakes.limitsFree(Infinity, false)).toBe(5_000);
    expect(wakes.limitsFree(4_000, false)).toBe(4_000);
    expect(wakes.limitsFree(6_000, false)).toBe(5_000);
    // A new look at every type replaces it.
    expect(wakes.limitsFree(Infinity, true)).toBe(Infinity);
    expect(wakes.limitsFree(Infinity, false)).toBe(Infinity);
  });
});
