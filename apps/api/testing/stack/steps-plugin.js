// @ts-check
// Test plugin "stepped": a handler built on durable steps (docs/reference/lifecycle.md#waitpoints-and-durable-steps), driven by its payload:
//   {"steps": n}                 runs steps "step-1" … "step-n", each returning {i, attempt, pid} (default 3)
//   {"crash_in_step": k, "crash_file": "…"}  inside step k, the first time (while crash_file does not exist: it is
//                                created first), kills its own worker process with SIGKILL
//   {"sleep_ms": n}              after step 1, ctx.sleep("nap", n)
//   {"wait": id | {timeout_seconds}}  after the steps, ctx.waitFor("approval", wait); its data is result.waited
//   {"report": "…"}             before the wait, in a step "report" (so once per job): progress 0.5 ("half way") and the
//                                text as output
//   {"duplicate": true}          calls ctx.step("step-1") twice
//   {"big": true}                step 1 returns more than 256 KiB
//   {"non_json": true}           step 1 returns a BigInt, which JSON cannot hold
//   {"marker": "…"}              each step's function appends "<marker> step=<i> attempt=<a> pid=<pid>" to
//                                $SCRIPTED_MARKER_FILE when it runs (not when it is replayed)
const fs = require("node:fs");

/** @type {import("@conveyor/contracts").JobPlugin} */
module.exports = {
  type: "stepped",
  async handle(payload, ctx) {
    const p = JSON.parse(payload.toString("utf8"));
    const mark = (i) =>
      p.marker &&
      process.env.SCRIPTED_MARKER_FILE &&
      fs.appendFileSync(process.env.SCRIPTED_MARKER_FILE, `${p.marker} step=${i} attempt=${ctx.attempt} pid=${process.pid}\n`);
    const results = [];
    const count = p.steps ?? 3;
    for (let i = 1; i <= count; i++) {
      results.push(
        await ctx.step(`step-${i}`, async () => {
          mark(i);
          if (p.crash_in_step === i && p.crash_file && !fs.existsSync(p.crash_file)) {
            fs.writeFileSync(p.crash_file, "crashed");
            process.kill(process.pid, "SIGKILL");
            await new Promise(() => {});
          }
          if (p.big && i === 1) return { blob: "x".repeat(300 * 1024) };
          if (p.non_json && i === 1) return { n: BigInt(1) };
          return { i, attempt: ctx.attempt, pid: process.pid };
        }),
      );
      if (p.duplicate && i === 1) await ctx.step("step-1", async () => 0);
      if (p.sleep_ms !== undefined && i === 1) await ctx.sleep("nap", p.sleep_ms);
    }
    if (p.report !== undefined)
      await ctx.step("report", async () => {
        ctx.progress(0.5, "half way");
        ctx.output(p.report);
      });
    const waited = p.wait === undefined ? undefined : await ctx.waitFor("approval", p.wait);
    return { results, ...(waited === undefined ? {} : { waited }) };
  },
};
