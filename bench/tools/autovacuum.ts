// Autovacuum for the hot tables (docs/reference/time.md#partitions-and-retention), measured: the same soak twice on a private Postgres server with
// autovacuum ON (the machine's runs with it off), first with the server's defaults, then with the per-table settings
// of bench/sql/autovacuum-hot-tables.sql, and (--variants=…,per-table+naptime10s) with a shorter autovacuum_naptime
// too; dead rows, table sizes, autovacuum runs, throughput and start lateness of
// both side by side. No worker kills nor Redis restart (they would move the figures more than the settings do);
// retention passes every 2 minutes, so the tables see deletes as they do in production.
//   tsx bench/tools/autovacuum.ts --rate=150 --duration=5m --postgres-port=55451 --variants=defaults,per-table
// Writes <out>/autovacuum.json and prints a Markdown table.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { startPrivatePostgres } from "../lib/private-postgres";
import { repoRoot } from "../lib/procs";
import type { SoakReport } from "../soak/report-types";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const rate = args.rate ?? "150";
const duration = args.duration ?? "5m";
const out = path.resolve(args.out ?? path.join(repoRoot, "bench/results/autovacuum"));
const HOT = ["jobs", "job_queue", "events", "job_logs", "job_search", "usage_counts", "stored_payload_bytes", "event_cursors", "type_state"];

function soak(name: string, serverUrl: string, setupSql?: string): Promise<SoakReport> {
  const dir = path.join(out, name);
  const argv = [
    "--conditions=conveyor-source",
    "--import",
    "tsx",
    "bench/soak/soak.ts",
    `--rate=${rate}`,
    `--duration=${duration}`,
    "--kill-every=1000h",
    "--redis-restart-at=0",
    "--retention-every=2m",
    "--retention-age=2m",
    "--drain=2m",
    `--database-server=${serverUrl}`,
    `--api-port=${args["api-port"] ?? 3710}`,
    `--worker-ports=${args["worker-ports"] ?? "3711,3712"}`,
    `--redis-port=${args["redis-port"] ?? 7451}`,
    `--out=${dir}`,
    ...(setupSql ? [`--setup-sql=${setupSql}`] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
    child.once("exit", (code) => {
      try {
        resolve(JSON.parse(readFileSync(path.join(dir, "report.json"), "utf8")) as SoakReport);
      } catch (error) {
        reject(new Error(`the ${name} soak exited (${code}) without a report: ${(error as Error).message}`));
      }
    });
  });
}

type Summary = {
  deliveredPerS: number;
  latenessP99Median: number;
  tables: Record<string, { maxDead: number; finalDead: number; maxTotalMb: number; finalTotalMb: number; autovacuums: number }>;
};

function summarise(report: SoakReport): Summary {
  // The steady part: after the first minute, before the load stopped.
  const steady = report.samples.filter((s) => s.atS > 60 && s.acceptedPerS > 0);
  const p99s = steady
    .map((s) => s.latenessP99)
    .filter((v) => Number.isFinite(v))
    .sort((a, b) => a - b);
  const tables: Summary["tables"] = {};
  for (const name of HOT) {
    const seen = report.samples.map((s) => s.tables[name]).filter((t) => t !== undefined);
    const last = report.finalTables[name] ?? seen.at(-1);
    if (!last) continue;
    tables[name] = {
      maxDead: Math.max(...seen.map((t) => t.dead), last.dead),
      finalDead: last.dead,
      maxTotalMb: Math.max(...seen.map((t) => t.total), last.total) / 1048576,
      finalTotalMb: last.total / 1048576,
      autovacuums: last.autovacuums,
    };
  }
  return {
    deliveredPerS: steady.reduce((a, s) => a + s.deliveredPerS, 0) / Math.max(1, steady.length),
    latenessP99Median: p99s[Math.floor(p99s.length / 2)] ?? Number.NaN,
    tables,
  };
}

/** What a run changes: per-table settings (bench/sql/autovacuum-hot-tables.sql) and server settings. */
const VARIANTS: Record<string, { perTable: boolean; server: Record<string, string> }> = {
  defaults: { perTable: false, server: {} },
  "per-table": { perTable: true, server: {} },
  // autovacuum_naptime is server-wide: how often the launcher visits each database (default 1 min).
  "per-table+naptime10s": { perTable: true, server: { autovacuum_naptime: "10s" } },
};

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const names = (args.variants ?? "defaults,per-table").split(",");
  for (const name of names) if (!VARIANTS[name]) throw new Error(`no variant ${name}; there are ${Object.keys(VARIANTS).join(", ")}`);
  const server = await startPrivatePostgres({ port: Number(args["postgres-port"] ?? 55451), autovacuum: true });
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      server.stop();
      process.exit(130);
    });
  const results: Record<string, Summary> = {};
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    for (const name of names) {
      const variant = VARIANTS[name]!;
      // A private server of this tool's own: ALTER SYSTEM is fine here (never on the machine's shared server).
      // Only the keys a variant sets: the server's own postgresql.auto.conf (port, sockets, autovacuum on) stays.
      for (const key of new Set(Object.values(VARIANTS).flatMap((v) => Object.keys(v.server)))) await admin.query(`ALTER SYSTEM RESET ${key}`);
      for (const [key, value] of Object.entries(variant.server)) await admin.query(`ALTER SYSTEM SET ${key} = '${value}'`);
      await admin.query("SELECT pg_reload_conf()");
      results[name] = summarise(await soak(name, server.url, variant.perTable ? path.join(repoRoot, "bench/sql/autovacuum-hot-tables.sql") : undefined));
    }
  } finally {
    await admin.end();
    server.stop();
  }
  writeFileSync(path.join(out, "autovacuum.json"), JSON.stringify({ rate, duration, results }, null, 1));
  const f = (v: number | undefined, digits = 0) => (v === undefined ? "—" : v.toFixed(digits));
  const across = (pick: (s: Summary) => number | undefined, digits = 0) => names.map((n) => f(pick(results[n]!), digits)).join(" / ");
  const lines = [
    `variants: ${names.join(" / ")}`,
    "",
    `| table | most dead rows seen | dead rows at the end | largest size, MB | autovacuum runs |`,
    `|---|---|---|---|---|`,
    ...HOT.filter((t) => names.some((n) => results[n]!.tables[t])).map(
      (t) =>
        `| ${t} | ${across((s) => s.tables[t]?.maxDead)} | ${across((s) => s.tables[t]?.finalDead)} | ${across((s) => s.tables[t]?.maxTotalMb, 1)} | ${across((s) => s.tables[t]?.autovacuums)} |`,
    ),
    "",
    `first deliveries/s (steady): ${across((s) => s.deliveredPerS)}; median of the 10-s p99 start lateness: ${across((s) => s.latenessP99Median)} ms`,
  ];
  process.stdout.write(`\n${lines.join("\n")}\n`);
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
