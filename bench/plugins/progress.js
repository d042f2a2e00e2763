// @ts-check
// The live results benchmark's job type (docs/reference/events.md#progress-and-live-results): runs `ms` milliseconds, reporting progress every `every_ms`
// (10 times a second at 100) when `report` is true, and sleeping the same without reporting when it is false.
/** @type {import("@conveyor/contracts").JobPlugin} */
module.exports = {
  type: "bench_progress",
  async handle(payload, ctx) {
    const { ms, every_ms: every, report } = JSON.parse(payload.toString("utf8"));
    const started = Date.now();
    for (let step = 1; Date.now() - started < ms; step++) {
      await new Promise((resolve) => setTimeout(resolve, every));
      if (report) ctx.progress(Math.min(1, (Date.now() - started) / ms), `step ${step}`);
    }
  },
};
