// The soak's HTML report: one self-contained page (uPlot and its stylesheet inlined from node_modules, the report's
// JSON embedded), so it opens from disk anywhere. Plots: throughput, start lateness, RSS per process, Postgres'
// table sizes; kills, the Redis restart and retention passes are drawn as vertical lines on each.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { SoakReport } from "./report-types";

const uplotDir = path.dirname(require.resolve("uplot"));

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

export function writeReportPage(file: string, report: SoakReport): void {
  const s = report.summary;
  const verdict = s.lost === 0 && s.unexplainedDuplicates === 0 && s.notFinal === 0;
  const summaryRows: [string, string][] = [
    ["jobs sent / accepted / refused", `${s.sent.toLocaleString("en-US")} / ${s.accepted.toLocaleString("en-US")} / ${s.refused.toLocaleString("en-US")}`],
    [
      "final statuses",
      Object.entries(s.statuses)
        .map(([k, v]) => `${k} ${v.toLocaleString("en-US")}`)
        .join(", "),
    ],
    [
      "lost (accepted, never final, not taken by retention)",
      `${s.lost}${s.lostExamples.length ? ` (e.g. soak-${s.lostExamples.slice(0, 5).join(", soak-")})` : ""}`,
    ],
    ["not final after the drain", String(s.notFinal)],
    ["done without any provider request", String(s.doneWithoutDelivery)],
    ["duplicates (provider saw the job twice) / outside 2 min after a kill or restart", `${s.duplicates} / ${s.unexplainedDuplicates}`],
    ["worker SIGKILLs / Redis restarts", `${s.kills} / ${s.redisRestarts}`],
    ["retention passes / jobs deleted", `${s.retentionPasses} / ${s.deletedByRetention.toLocaleString("en-US")}`],
  ];
  const tables = Object.entries(report.finalTables)
    .slice(0, 12)
    .map(
      ([name, t]) =>
        `<tr><td>${escape(name)}</td><td>${mb(t.heap)}</td><td>${mb(t.indexes)}</td><td>${mb(t.total)}</td><td>${t.live.toLocaleString("en-US")}</td><td>${t.dead.toLocaleString("en-US")}</td></tr>`,
    )
    .join("");
  const events = report.events.map((e) => `<tr><td>${e.atS.toFixed(0)} s</td><td>${escape(e.kind)}</td><td>${escape(e.detail)}</td></tr>`).join("");
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Conveyor soak ${escape(report.startedAt)}</title>
<style>${readFileSync(path.join(uplotDir, "uPlot.min.css"), "utf8")}
body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
.ok{color:#127a2e;font-weight:600}.bad{color:#b3261e;font-weight:600}.plot{margin:8px 0 20px}
</style></head><body>
<h1>Conveyor soak: ${escape(report.startedAt)} → ${escape(report.endedAt)}</h1>
<p>${report.options.rate} jobs/s requested for ${report.options.durationS} s, mixed types (webhook, send_email, send_sms, chat_notify) on provider fakes;
API and two workers as separate processes. <span class="${verdict ? "ok" : "bad"}">${verdict ? "Nothing lost; duplicates only after kills." : "Something was lost or duplicated outside a kill: see below."}</span></p>
<table>${summaryRows.map(([k, v]) => `<tr><th>${escape(k)}</th><td>${escape(v)}</td></tr>`).join("")}</table>
<h2>Throughput (jobs/s)</h2><div class="plot" id="throughput"></div>
<h2>Start lateness (ms, POST → the handler's provider request)</h2><div class="plot" id="lateness"></div>
<h2>RSS per process (MB)</h2><div class="plot" id="rss"></div>
<h2>Postgres: total size per table, indexes included (MB)</h2><div class="plot" id="tables"></div>
<h2>Tables at the end</h2>
<table><tr><th>table</th><th>heap</th><th>indexes</th><th>total</th><th>live rows</th><th>dead rows</th></tr>${tables}</table>
<h2>Events</h2><table><tr><th>at</th><th>what</th><th>detail</th></tr>${events}</table>
<script>${readFileSync(path.join(uplotDir, "uPlot.iife.min.js"), "utf8")}</script>
<script>
const report = ${JSON.stringify(report).replace(/</g, "\\u003c")};
const t = report.samples.map((s) => s.atS);
const marks = report.events.filter((e) => ["kill", "redis", "retention"].includes(e.kind));
const colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const markColour = { kill: "rgba(214,39,40,.5)", redis: "rgba(148,103,189,.7)", retention: "rgba(44,160,44,.45)" };
const eventLines = {
  hooks: {
    draw: [(u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.lineWidth = 2;
      for (const m of marks) {
        const x = u.valToPos(m.atS, "x", true);
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
        ctx.strokeStyle = markColour[m.kind];
        ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
      }
      ctx.restore();
    }],
  },
};
function plot(id, names, columns, unit) {
  const el = document.getElementById(id);
  new uPlot({
    width: 1050, height: 260, plugins: [eventLines],
    scales: { x: { time: false } },
    axes: [{ label: "seconds (red: worker SIGKILL, purple: Redis restart, green: retention pass)" }, { label: unit, size: 70 }],
    series: [{ label: "s" }, ...names.map((n, i) => ({ label: n, stroke: colours[i % colours.length], width: 1.5, spanGaps: true }))],
  }, [t, ...columns.map((c) => c.map((v) => (v === null || Number.isNaN(v) ? null : v)))], el);
}
plot("throughput", ["accepted/s", "first deliveries/s", "refused/s"],
  [report.samples.map((s) => s.acceptedPerS), report.samples.map((s) => s.deliveredPerS), report.samples.map((s) => s.refusedPerS)], "jobs/s");
plot("lateness", ["p50", "p99"], [report.samples.map((s) => s.latenessP50), report.samples.map((s) => s.latenessP99)], "ms");
const procs = Object.keys(report.samples[0]?.rssMb ?? {});
plot("rss", procs, procs.map((p) => report.samples.map((s) => s.rssMb[p])), "MB");
const names = Object.keys(report.finalTables).slice(0, 8);
plot("tables", names, names.map((n) => report.samples.map((s) => s.tables[n] ? s.tables[n].total / 1048576 : null)), "MB");
</script></body></html>
`;
  writeFileSync(file, html);
}
