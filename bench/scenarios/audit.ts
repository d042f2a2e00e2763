// Audit log (issue 26, docs/reference/tenants.md#audit-log), two figures:
//   what writing the entry costs the audited endpoints: PATCH /org/members/{id} (a role change, one request in
//     flight, p50 over many) and POST /jobs/bulk cancelling 10,000 pending jobs (worst of 3), each against the same
//     run with audit rows discarded by a bench-only BEFORE INSERT trigger (the endpoint, its transaction and the
//     INSERT statement stay; the row, its six index entries and its WAL go). Runs alternate with, without, with,
//     without; the best of each counts. The round trip of the INSERT stays in the baseline: docs/performance.md
//     gives the before/after against the commit without the audit log, which includes it.
//   GET /audit-log p99 with 1,000,000 entries in the organization, for each filter shape (none, actor, action prefix
//     common and rare, target, a time window, page 20 of a walk along Link), one request in flight; beside the same
//     SQL run bare over the pool (what the endpoint adds on top of Postgres).
import { auditActionsMatching } from "@conveyor/contracts";
import { listAuditEntries, newId } from "@conveyor/db";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { sequential } from "../lib/sequential";
import { clearJobs, clearPrefix, conveyorEnv, loginToken, type BenchEnv } from "../lib/setup";
import { queueNoopJobs } from "./worker";

const AUDIT_OFF = `
  CREATE FUNCTION conveyor_bench_discard_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
  CREATE TRIGGER conveyor_bench_no_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION conveyor_bench_discard_audit();`;
const AUDIT_ON = `
  DROP TRIGGER conveyor_bench_no_audit ON audit_log;
  DROP FUNCTION conveyor_bench_discard_audit();`;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

type People = { owner: { userId: string; token: string }; members: string[] };
type Someone = { owner: { userId: string }; members: string[] };

/** An owner and `count` members of the bench organization (the owner's token comes from logging in, once the API runs). */
async function people(env: BenchEnv, count: number): Promise<Someone> {
  const ownerId = newId();
  const ids = Array.from({ length: count }, () => newId());
  await env.db.pool.query(`INSERT INTO users (id, email, password_hash) SELECT id, 'audit-' || id || '@example.test', 'unused' FROM unnest($1::uuid[]) AS id`, [
    [ownerId, ...ids],
  ]);
  await env.db.pool.query(
    `INSERT INTO memberships (org_id, user_id, role) SELECT $1, id, CASE WHEN id = $2 THEN 'owner'::role ELSE 'member'::role END FROM unnest($3::uuid[]) AS id`,
    [env.orgId, ownerId, [ownerId, ...ids]],
  );
  return { owner: { userId: ownerId }, members: ids };
}

/** p50 of `count` role changes, one in flight, alternating admin and member over the members. */
async function roleChanges(origin: string, who: People, seconds: number): Promise<number> {
  let n = 0;
  const roles = ["admin", "member"];
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  for (let warm = 0; performance.now() < until || warm < 50; warm++) {
    const member = who.members[n % who.members.length]!;
    const role = roles[Math.floor(n / who.members.length) % 2]!;
    n++;
    const started = performance.now();
    const res = await fetch(`${origin}/org/members/${member}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${who.owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ role }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`role change answered ${res.status}`);
    if (warm >= 50) latencies.push(performance.now() - started);
  }
  return percentile(latencies, 50);
}

/** Seconds to cancel `count` pending jobs in one bulk call. */
async function bulkCancel(env: BenchEnv, origin: string, count: number): Promise<number> {
  await queueNoopJobs(env, count);
  await env.db.pool.query("VACUUM ANALYZE jobs, job_queue");
  const started = performance.now();
  const res = await fetch(`${origin}/jobs/bulk`, {
    method: "POST",
    body: JSON.stringify({ action: "cancel", filter: { status: "pending" } }),
    headers: { "content-type": "application/json", "x-api-key": env.apiKey },
  });
  const result = (await res.json()) as { affected?: number };
  if (res.status !== 200 || result.affected !== count) throw new Error(`bulk cancel answered ${res.status} ${JSON.stringify(result)}`);
  const took = (performance.now() - started) / 1000;
  await clearJobs(env.db);
  return took;
}

export async function auditWriteCost(env: BenchEnv, port: number, options: { seconds: number; bulkJobs: number }): Promise<Row[]> {
  let api: Child | undefined;
  const origin = `http://127.0.0.1:${port}`;
  const someone = await people(env, 20);
  const role = { on: [] as number[], off: [] as number[] };
  const bulk = { on: [] as number[], off: [] as number[] };
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port), LOG_LEVEL: "warn" }));
    await waitForHttp(`${origin}/healthz`);
    const who: People = { ...someone, owner: { ...someone.owner, token: await loginToken(env, origin, someone.owner.userId) } };
    await bulkCancel(env, origin, 10);
    for (const audited of [true, false, true, false]) {
      if (!audited) await env.db.pool.query(AUDIT_OFF);
      try {
        const before = Number((await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM audit_log")).rows[0]!.n);
        role[audited ? "on" : "off"].push(await roleChanges(origin, who, options.seconds));
        bulk[audited ? "on" : "off"].push(await bulkCancel(env, origin, options.bulkJobs));
        const after = Number((await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM audit_log")).rows[0]!.n);
        if (audited ? after <= before : after !== before)
          throw new Error(`audit rows ${before} → ${after}: the ${audited ? "audited" : "baseline"} run is not what it claims`);
      } finally {
        if (!audited) await env.db.pool.query(AUDIT_ON);
      }
    }
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
  const [roleOn, roleOff, bulkOn, bulkOff] = [Math.min(...role.on), Math.min(...role.off), Math.min(...bulk.on), Math.min(...bulk.off)];
  return [
    {
      scenario: "Audit log: cost of the entry, role change",
      metric: "PATCH /org/members/{id} p50, one in flight, best of 2",
      conveyor: roleOn,
      baseline: roleOff,
      baselineName: "same run, audit rows discarded",
      unit: "ms",
      target: "≤ 1.1× (at most 10 % slower)",
      met: roleOn <= 1.1 * roleOff,
    },
    {
      scenario: `Audit log: cost of the entry, bulk cancel of ${options.bulkJobs.toLocaleString("en-US")}`,
      metric: "POST /jobs/bulk time to answer, best of 2",
      conveyor: bulkOn,
      baseline: bulkOff,
      baselineName: "same run, audit rows discarded",
      unit: "s",
      target: "≤ 1.1× (at most 10 % slower)",
      met: bulkOn <= 1.1 * bulkOff,
    },
  ];
}

const ACTIONS: [string, number][] = [
  ["job.cancel", 40],
  ["job.replay", 20],
  ["jobs.bulk", 4],
  ["schedule.update", 6],
  ["schedule.create", 2],
  ["session.login", 15],
  ["session.logout", 5],
  ["session.login_failed", 3],
  ["api_key.create", 1],
  ["member.role_change", 1],
  ["webhook_endpoint.rotate_secret", 1],
  ["sso.update", 0.02],
];

/** `count` entries over the last 400 days: 50 actors, the action mix above, a target per entry (jobs mostly distinct). */
async function seedEntries(env: BenchEnv, count: number, actors: string[]): Promise<void> {
  const weights = ACTIONS.map(([, w]) => w);
  const total = weights.reduce((a, b) => a + b, 0);
  const bounds = weights.map((_, i) => weights.slice(0, i + 1).reduce((a, b) => a + b, 0) / total);
  const startMs = Date.now() - 400 * 24 * 3600 * 1000;
  const stepMs = (400 * 24 * 3600 * 1000) / count;
  for (let done = 0; done < count; done += 200_000) {
    await env.db.pool.query(
      `INSERT INTO audit_log (id, org_id, time, actor_type, actor_id, actor_label, action, target_type, target_id, ip, user_agent, request_id, changes)
       SELECT gen_random_uuid(), $1, to_timestamp(($3::float8 + g * $4::float8) / 1000), 'user', a.id, 'member@example.test',
              x.action, 'job', CASE WHEN g % 10 = 0 THEN $7::uuid ELSE gen_random_uuid() END, '203.0.113.7', 'Mozilla/5.0 (bench)', md5(g::text),
              '{"status": {"before": "pending", "after": "cancelled"}}'::jsonb
         FROM generate_series($5::bigint, $5::bigint + $2 - 1) AS g
         CROSS JOIN LATERAL (SELECT ($6::uuid[])[1 + (g % cardinality($6::uuid[]))] AS id) AS a
         CROSS JOIN LATERAL (SELECT ($8::text[])[1 + (SELECT count(*) FROM unnest($9::float8[]) AS b WHERE b < (g * 7919 % 100000) / 100000.0)] AS action) AS x`,
      [env.orgId, Math.min(200_000, count - done), startMs, stepMs, done, actors, HOT_TARGET, ACTIONS.map(([a]) => a), bounds.slice(0, -1)],
    );
  }
  await env.db.pool.query("VACUUM ANALYZE audit_log");
  await env.db.pool.query("CHECKPOINT");
}

/** A target that one entry in ten names (a long-lived job or member): the hardest target filter. */
const HOT_TARGET = "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01";

export async function auditList(env: BenchEnv, port: number, options: { entries: number; seconds: number }): Promise<Row[]> {
  const who = await people(env, 50);
  const actors = [who.owner.userId, ...who.members];
  await seedEntries(env, options.entries, actors);
  const origin = `http://127.0.0.1:${port}`;
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 24 * 3600 * 1000).toISOString();
  const shapes: { name: string; query: (i: number) => string }[] = [
    { name: "no filter", query: () => "" },
    { name: "actor_id", query: (i) => `actor_id=${actors[i % actors.length]}` },
    { name: "action=job. (common prefix)", query: () => "action=job." },
    { name: "action=sso. (rare)", query: () => "action=sso." },
    { name: "action=member.role_change", query: () => "action=member.role_change" },
    { name: "target_id (1 entry in 10)", query: () => `target_id=${HOT_TARGET}` },
    { name: "after/before, a day 200 days ago", query: (i) => `after=${day(200 + (i % 5))}&before=${day(199 + (i % 5))}` },
    { name: "actor_id + action=session.", query: (i) => `actor_id=${actors[i % actors.length]}&action=session.` },
  ];
  let api: Child | undefined;
  const rows: Row[] = [];
  const results: { name: string; p99: number; bare: number }[] = [];
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port), LOG_LEVEL: "warn" }));
    await waitForHttp(`${origin}/healthz`);
    const headers = { authorization: `Bearer ${await loginToken(env, origin, who.owner.userId)}` };
    for (const shape of shapes) {
      const result = await sequential({
        origin,
        path: (i) => `/audit-log?limit=50&${shape.query(i)}`,
        headers,
        durationS: options.seconds,
        check: (status) => {
          if (status !== 200) throw new Error(`${shape.name}: GET /audit-log answered ${status}`);
        },
      });
      results.push({ name: shape.name, p99: result.p99, bare: await bareP99(env, shape.query) });
    }
    // Page 20 of a walk along Link: the cursor, not an offset, keeps it as fast as the first.
    let next: string | null = "/audit-log?limit=50&action=job.";
    for (let page = 1; page < 20 && next; page++) {
      const res: Response = await fetch(`${origin}${next}`, { headers });
      await res.arrayBuffer();
      const link = res.headers.get("link");
      next = link ? new URL(/<([^>]+)>/.exec(link)![1]!).pathname + new URL(/<([^>]+)>/.exec(link)![1]!).search : null;
    }
    if (next) {
      const deep = await sequential({ origin, path: () => next!, headers, durationS: options.seconds });
      results.push({ name: "page 20 of action=job.", p99: deep.p99, bare: Number.NaN });
    }
  } finally {
    await api?.stop();
  }
  const worst = results.reduce((a, b) => (b.p99 > a.p99 ? b : a));
  for (const r of results) {
    rows.push({
      scenario: `GET /audit-log (${options.entries.toLocaleString("en-US")} entries in the org)`,
      metric: `p99, limit 50, ${r.name}`,
      conveyor: r.p99,
      baseline: Number.isNaN(r.bare) ? null : r.bare,
      baselineName: "the same query, bare over the pool",
      unit: "ms",
      target: "≤ 50 ms",
      met: r.p99 <= 50,
    });
  }
  rows.push({
    scenario: `GET /audit-log (${options.entries.toLocaleString("en-US")} entries in the org)`,
    metric: `worst p99 of every filter shape (${worst.name})`,
    conveyor: worst.p99,
    baseline: null,
    baselineName: "",
    unit: "ms",
    target: "≤ 50 ms",
    met: worst.p99 <= 50,
  });
  return rows;
}

/** p99 of the list query itself (listAuditEntries over the pool), 200 times, for one shape. */
async function bareP99(env: BenchEnv, query: (i: number) => string): Promise<number> {
  const latencies: number[] = [];
  for (let i = 0; i < 220; i++) {
    const q = new URLSearchParams(query(i));
    const prefix = q.get("action");
    const started = performance.now();
    await listAuditEntries(env.db.pool, {
      orgId: env.orgId,
      actorId: q.get("actor_id") ?? undefined,
      targetId: q.get("target_id") ?? undefined,
      actions: prefix === null ? undefined : auditActionsMatching(prefix),
      after: q.get("after") ? new Date(q.get("after")!) : undefined,
      before: q.get("before") ? new Date(q.get("before")!) : undefined,
      limit: 50,
    });
    if (i >= 20) latencies.push(performance.now() - started);
  }
  return percentile(latencies, 99);
}
