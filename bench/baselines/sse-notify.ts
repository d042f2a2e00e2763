// Baseline for the server-sent events figures: the least a "Postgres to SSE" server can do. It LISTENs on CHANNEL and
// writes each notification's payload as an SSE frame to the streams of the org it names (header X-Org). No event
// table, no horizon, no catch-up, no authentication, no filters, no bound: Conveyor's figures are read against it.
import http from "node:http";
import pg from "pg";

const port = Number(process.env.PORT);
const channel = process.env.CHANNEL!;
const byOrg = new Map<string, Set<http.ServerResponse>>();

const server = http.createServer((req, res) => {
  if (req.url === "/healthz") return void res.end("ok");
  const org = String(req.headers["x-org"] ?? "");
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
  res.flushHeaders();
  let streams = byOrg.get(org);
  if (!streams) byOrg.set(org, (streams = new Set()));
  streams.add(res);
  res.on("close", () => streams.delete(res));
});

let id = 0;
async function main(): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  client.on("notification", (message) => {
    const payload = message.payload ?? "{}";
    const { org } = JSON.parse(payload) as { org: string };
    const frame = `id: ${++id}\nevent: job.created\ndata: ${payload}\n\n`;
    for (const res of byOrg.get(org) ?? []) res.write(frame);
  });
  await client.query(`LISTEN ${channel}`);
  server.listen(port, "127.0.0.1");
}

void main();
