// @ts-check
// The fairness benchmarks' job type: takes 20 ms, like a quick call to a provider.
/** @type {import("@conveyor/contracts").JobPlugin} */
module.exports = { type: "bench_sleep", handle: () => new Promise((resolve) => setTimeout(resolve, 20)) };
