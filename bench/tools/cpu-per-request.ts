// Diagnostic (not part of `npm run bench`): CPU time per POST /jobs request of the API process and of Postgres,
// for the checkout at ROOT (default this one) — CPU time, not wall time, so it compares two versions fairly even
// on a loaded machine. A private Postgres (with pg_stat_statements) serves each run.
//
// CPU_PROF=dir writes the API's V8 CPU profile there. TRACING=1 turns tracing on, exporting to a receiver started here
// (one that takes every export and answers 200, so what is measured is the API's side of it).
//   npx tsx --conditions=conveyor-source bench/tools/cpu-per-request.ts [ROOT] [requests]
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import autocannon from "autocannon";
import pg from "pg";
import { freePort } from "@conveyor/testkit";
import { startPrivatePostgres } from "../lib/private-postgres";
import { conveyorCommand, waitForHttp } from "../lib/procs";
import { JWT_SECRET } from "../lib/setup";

const root = path.resolve(process.argv[2] ?? path.join(__dirname, "../.."));
const requests = Number(process.argv[3] ?? 20_000);
const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString()) || 100;
const cpuOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / ticks) * 1e6;
};
const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42, total: "19.90" } } });

/** Spans received by name, when the exporter speaks JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
const spanNames = new Map<string, number>();

/** An OTLP/HTTP receiver that drops every export; its endpoint. */
async function otlpSink(): Promise<string> {
  // An empty ExportTraceServiceResponse in protobuf (the default protocol) is no bytes.
  const sink = createServer((req, res) => {
    const json = String(req.headers["content-type"]).startsWith("application/json");
    let body = "";
    if (json) req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    else req.resume();
    req.on("end", () => {
      if (json) for (const match of body.matchAll(/"name":"([^"]*)","kind"/g)) spanNames.set(match[1]!, (spanNames.get(match[1]!) ?? 0) + 1);
      if (json) res.writeHead(200, { "content-type": "application/json" }).end("{}");
      else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  sink.unref();
  return `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
}

async function main() {
  // OTEL_TRACES_SAMPLER passes through: always_off separates the instrumentations' own cost from the spans'.
  const sampler = Object.fromEntries(
    ["OTEL_TRACES_SAMPLER", "OTEL_EXPORTER_OTLP_PROTOCOL"].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])),
  );
  const tracing = process.env.TRACING ? { OTEL_EXPORTER_OTLP_ENDPOINT: await otlpSink(), ...sampler } : {};
  const server = await startPrivatePostgres();
  const node = (entry: string, env: Record<string, string>) =>
    spawn(
      process.execPath,
      [...(process.env.CPU_PROF && entry.startsWith("apps/") ? ["--cpu-prof", `--cpu-prof-dir=${process.env.CPU_PROF}`] : []), ...conveyorCommand(entry, root)],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: "/tmp", ...env },
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
  try {
    const databaseUrl = server.url.replace(/\/postgres$/, "/cpu");
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE cpu");
    await admin.end();
    await new Promise<void>((resolve, reject) =>
      node("packages/db/src/cli/migrate.ts", { DATABASE_URL: databaseUrl }).once("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`migrate ${code}`)),
      ),
    );
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const [orgId, userId] = [randomUUID(), randomUUID()];
    const apiKey = `cvk_${randomBytes(32).toString("base64url").replace(/[-_]/g, "A").slice(0, 43)}`;
    await db.query("INSERT INTO organizations (id, name) VALUES ($1, 'cpu')", [orgId]);
    await db.query("INSERT INTO users (id, email, password_hash) VALUES ($1, 'cpu@example.test', 'x')", [userId]);
    await db.query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')", [orgId, userId]);
    await db.query("INSERT INTO api_keys (id, org_id, created_by, name, prefix, key_hash) VALUES ($1, $2, $3, 'cpu', $4, $5)", [
      randomUUID(),
      orgId,
      userId,
      apiKey.slice(0, 8),
      createHash("sha256").update(apiKey).digest(),
    ]);
    const port = await freePort();
    const api = node("apps/api/src/server.ts", {
      NODE_ENV: "production",
      LOG_LEVEL: "info",
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      REDIS_URL: "redis://localhost:6379",
      REDIS_PREFIX: `cpu-${randomBytes(3).toString("hex")}`,
      JWT_SECRET,
      WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
      API_RATE_LIMIT_PER_SEC: "0",
      AUTH_RATE_LIMIT_PER_MIN: "0",
      // QUOTA_* pass through: the cost of the quota check per request (issue 36).
      ...Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith("QUOTA_") && entry[1] !== undefined)),
      ...tracing,
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      const fire = (amount: number) =>
        autocannon({
          url: `http://127.0.0.1:${port}/jobs`,
          method: "POST",
          body,
          headers: { "content-type": "application/json", "x-api-key": apiKey },
          amount,
          connections: 64,
        });
      await fire(2_000);
      await server.resetStatements();
      const [apiBefore, pgBefore] = [cpuOf(api.pid!), server.cpuMicros()];
      const result = await fire(requests);
      const [apiUs, pgUs] = [(cpuOf(api.pid!) - apiBefore) / requests, (server.cpuMicros() - pgBefore) / requests];
      if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
      console.log(
        `${root}${process.env.TRACING ? " (tracing on)" : ""}: API ${apiUs.toFixed(0)} µs/request, Postgres ${pgUs.toFixed(0)} µs/request (${requests} requests, ${result.requests.average} req/s)`,
      );
      if (spanNames.size) console.log(`  spans per request: ${[...spanNames].map(([name, n]) => `${name} ${(n / requests).toFixed(2)}`).join(", ")}`);
      for (const s of await server.statements(8))
        console.log(`  ${((s.totalMs * 1000) / requests).toFixed(1)} µs/req ${s.calls} calls: ${s.query.slice(0, 140)}`);
    } finally {
      api.kill();
      await new Promise((resolve) => api.once("exit", resolve));
      await db.end();
    }
  } finally {
    server.stop();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
