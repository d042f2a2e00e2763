// Baseline for the unpaged list: the same rows read straight from Postgres through a cursor by a bare
// node-postgres client, serialised but not sent anywhere. Prints time and peak RSS.
import { readFileSync } from "node:fs";
import pg from "pg";
import QueryStream from "pg-query-stream";

const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;

async function main() {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const base = rss();
  let peak = base;
  const started = Date.now();
  const stream = client.query(
    new QueryStream(
      "SELECT id, type, status, retries, max_retries, created_at, updated_at FROM jobs WHERE org_id = $1 ORDER BY id DESC",
      [process.env.ORG_ID],
      { batchSize: 1000 },
    ),
  );
  let rows = 0;
  let bytes = 0;
  for await (const row of stream) {
    bytes += JSON.stringify(row).length;
    if (++rows % 10_000 === 0) peak = Math.max(peak, rss());
  }
  process.stdout.write(`RESULT ${JSON.stringify({ rows, bytes, seconds: (Date.now() - started) / 1000, rss_growth_mb: peak - base })}\n`);
  await client.end();
}
void main();
