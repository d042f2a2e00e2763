// @ts-check
// The steps benchmark's job type (docs/reference/lifecycle.md#waitpoints-and-durable-steps): {"steps": n} runs n no-op durable steps; {"wait": id} waits on that
// waitpoint (ctx.waitFor), so the job holds no slot until it is completed.
/** @type {import("@conveyor/contracts").JobPlugin} */
module.exports = {
  type: "bench_steps",
  async handle(payload, ctx) {
    const p = JSON.parse(payload.toString("utf8"));
    for (let i = 0; i < (p.steps ?? 0); i++) await ctx.step(`s${i}`, async () => i);
    if (p.wait) await ctx.waitFor("wait", p.wait);
  },
};
