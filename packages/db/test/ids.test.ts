// Job ids are UUID v7 made from a pool of random bytes (core/ids.ts): they must stay valid v7, unique, and in the
// order made, also many within one millisecond — lists page by id, and a batch's items are listed in their order.
import { isUuid, newId } from "../src/core/ids";

describe("newId", () => {
  it("makes version 7 ids with the RFC 9562 variant, carrying the time they were made", () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe("7");
    expect(["8", "9", "a", "b"]).toContain(id[19]);
    const msecs = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(after + 1);
  });

  it("makes unique ids that sort in the order they were made, across refills of the random pool", () => {
    // 100,000 ids span many milliseconds with hundreds in each, and about 390 refills of the 256-id pool.
    const ids = Array.from({ length: 100_000 }, () => newId());
    expect(new Set(ids).size).toBe(ids.length);
    const outOfOrder = ids.findIndex((id, i) => i > 0 && ids[i - 1]! >= id);
    expect(outOfOrder).toBe(-1);
  });

  it("does not repeat the random part of ids made in different milliseconds", () => {
    const tails = new Set<string>();
    for (let i = 0; i < 2_000; i++) tails.add(newId().slice(24));
    expect(tails.size).toBe(2_000);
  });
});
