// Many POST /jobs at once (docs/reference/lifecycle.md#lifecycle): the shared writer groups concurrent creations into
// one statement (services/infrastructure/job-writer.ts), so this checks that each request still gets its own answer —
// its own id, its own quota refusal, its own validation error, its dedupe holder — and that the rows and the usage
// counts in Postgres match those answers one by one.
import { createApiKey, createOrg, startTestApi, type TestApi } from "@conveyor/api/testing";

const QUOTA = 25;
let api: TestApi;
let base: string;

beforeAll(async () => {
  // The same daily quota for every organization; read at every admission (no cache) so the first refusal is exact.
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0", QUOTA_JOBS_PER_DAY: String(QUOTA), QUOTA_CACHE_MS: "0" });
  base = await api.listen();
}, 60_000);
afterAll(() => api.close());

type Sent = { org: string; n: number; body: Record<string, unknown>; kind: "plain" | "bad" | "dedupe" };
type Answer = Sent & { status: number; json: { id?: string; status?: string; deduplicated?: boolean; error?: { code: string; details?: { path: string }[] } } };

const webhook = (n: number) => ({ type: "webhook", payload: { url: `https://hooks.example.com/${n}`, payload: { n } } });

async function post(key: string, sent: Sent): Promise<Answer> {
  const res = await fetch(`${base}/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(sent.body),
  });
  return { ...sent, status: res.status, json: (await res.json()) as Answer["json"] };
}

describe("concurrent POST /jobs", () => {
  it("answers each request for itself, and the database holds exactly what was answered", async () => {
    const orgs = await Promise.all([0, 1, 2].map(async () => createOrg(api.database.db, api.deps.config)));
    const keys = await Promise.all(orgs.map(async (org) => (await createApiKey(api.database.db, org)).key));
    // The third far from its own quota: its creations share statements with the others' that fail their quota check.
    await api.database.db.pool.query("INSERT INTO org_quotas (org_id, jobs_per_day, updated_at) VALUES ($1, 1000000, now())", [orgs[2]!.orgId]);
    const sent: [string, Sent][] = [];
    let n = 0;
    // Two organizations past their quota: 40 valid creations each (25 fit), 6 bad ones mixed in.
    for (const i of [0, 1]) {
      for (let j = 0; j < 40; j++) sent.push([keys[i]!, { org: orgs[i]!.orgId, n: ++n, body: webhook(n), kind: "plain" }]);
      for (const bad of [{ max_retries: -1 }, { priority: "high" }, { run_at: "yesterday" }]) {
        for (let j = 0; j < 2; j++) sent.push([keys[i]!, { org: orgs[i]!.orgId, n: ++n, body: { ...webhook(n), ...bad }, kind: "bad" }]);
      }
    }
    // A third within its quota: ten dedupe keys sent twice each (one creates, the other is answered its holder), 40 plain.
    for (let j = 0; j < 10; j++) {
      for (let k = 0; k < 2; k++) sent.push([keys[2]!, { org: orgs[2]!.orgId, n: ++n, body: { ...webhook(n), dedupe_key: `key-${j}` }, kind: "dedupe" }]);
      for (let k = 0; k < 4; k++) sent.push([keys[2]!, { org: orgs[2]!.orgId, n: ++n, body: webhook(n), kind: "plain" }]);
    }
    // Shuffled (deterministically), so the organizations' requests share statements.
    const order = sent.map((entry, i) => [(i * 7919) % sent.length, entry] as const).sort((a, b) => a[0] - b[0]);
    const answers = await Promise.all(order.map(([, [key, s]]) => post(key, s)));

    const rows = await api.database.db.pool.query<{ id: string; org_id: string; n: number }>(
      "SELECT id, org_id, (payload->'payload'->>'n')::int AS n FROM jobs WHERE org_id = ANY($1::uuid[])",
      [orgs.map((o) => o.orgId)],
    );
    const byId = new Map(rows.rows.map((r) => [r.id, r]));
    const created = answers.filter((a) => a.status === 202);
    // Every 202 is its own row: the request's organization and payload, and no two answers share an id.
    expect(new Set(created.map((a) => a.json.id)).size).toBe(created.length);
    for (const a of created) {
      expect(a.json).toEqual({ id: expect.any(String), status: "pending" });
      expect(byId.get(a.json.id!)).toEqual({ id: a.json.id, org_id: a.org, n: a.n });
    }
    expect(rows.rows).toHaveLength(created.length);

    for (const a of answers.filter((x) => x.kind === "bad")) {
      expect(a.status).toBe(400);
      expect(a.json.error?.code).toBe("validation_failed");
      expect(a.json.error?.details?.map((d) => d.path)).toEqual([Object.keys(a.body).find((k) => !["type", "payload"].includes(k))]);
    }
    for (const i of [0, 1]) {
      const mine = answers.filter((a) => a.org === orgs[i]!.orgId && a.kind === "plain");
      expect(mine.filter((a) => a.status === 202)).toHaveLength(QUOTA);
      const refused = mine.filter((a) => a.status !== 202);
      expect(refused).toHaveLength(40 - QUOTA);
      for (const a of refused) expect({ status: a.status, code: a.json.error?.code }).toEqual({ status: 429, code: "quota_exceeded" });
    }
    const third = answers.filter((a) => a.org === orgs[2]!.orgId);
    expect(third.filter((a) => a.kind === "plain").map((a) => a.status)).toEqual(Array(40).fill(202));
    for (let j = 0; j < 10; j++) {
      const pair = third.filter((a) => a.body.dedupe_key === `key-${j}`);
      const first = pair.find((a) => a.status === 202)!;
      const second = pair.find((a) => a !== first)!;
      expect(second).toMatchObject({ status: 200, json: { id: first.json.id, status: "pending", deduplicated: true } });
    }
    // Usage counts what was created, per organization.
    const usage = await api.database.db.pool.query<{ org_id: string; jobs: string }>(
      "SELECT org_id, sum(jobs_created)::text AS jobs FROM usage_counts WHERE org_id = ANY($1::uuid[]) GROUP BY org_id",
      [orgs.map((o) => o.orgId)],
    );
    expect(Object.fromEntries(usage.rows.map((r) => [r.org_id, Number(r.jobs)]))).toEqual({
      [orgs[0]!.orgId]: QUOTA,
      [orgs[1]!.orgId]: QUOTA,
      [orgs[2]!.orgId]: 50,
    });
  }, 60_000);
});
