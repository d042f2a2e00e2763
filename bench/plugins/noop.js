// @ts-check
// The benchmarks' job type: does nothing, so only Conveyor's own cost is measured.
/** @type {import("@conveyor/contracts").JobPlugin} */
module.exports = { type: "bench_noop", async handle() {} };
