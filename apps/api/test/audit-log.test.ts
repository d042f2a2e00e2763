// The audit log (docs/reference/tenants.md#audit-log, docs/reference/robustness.md#r44): a realistic mix of what owners, admins, members and API keys do, each
// change with exactly one entry (who, what, from where, before and after) written in the change's own transaction;
// refused changes write none; no request and no SQL outside retention alters an entry; a scan of every entry finds
// no password, token, secret, key or payload; GET /audit-log filters and pages, for owners and admins of that
// organization only.
import { newId } from "@conveyor/db";
import { addMember, createApiKey, createOrg, TEST_PASSWORD, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { startForgingProvider, type ForgingProvider } from "@conveyor/testkit/oidc";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let provider: ForgingProvider;
let owner: TestMember;
let admin: TestMember;
let member: TestMember;
let other: TestMember;
/** Every secret value the mix handled: none may appear in any entry. */
const secrets = new Set<string>([TEST_PASSWORD]);
const PAYLOAD_MARKER = "payload-marker-7f3a9c";
const SSO_SECRET = "sso-client-secret-9d2e4b";
const UA = "AuditTest/1.0 (+https://example.test)";

beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0", API_RATE_LIMIT_PER_SEC: "0", SSO_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" });
  provider = await startForgingProvider({ clientId: "audit-client", clientSecret: SSO_SECRET });
  secrets.add(SSO_SECRET);
  owner = await createOrg(api.database.db, api.deps.config, "Acme");
  admin = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
  member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  other = await createOrg(api.database.db, api.deps.config, "Globex");
  for (const m of [owner, admin, member, other]) secrets.add(m.token);
}, 60_000);
afterAll(async () => {
  await provider?.close();
  await api?.close();
});

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}`, "User-Agent": UA });

type Row = {
  id: string;
  org_id: string;
  time: Date;
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  changes: unknown;
  details: unknown;
};

const entries = async (orgId: string) => (await api.database.db.pool.query<Row>("SELECT * FROM audit_log WHERE org_id = $1 ORDER BY time, id", [orgId])).rows;

/** Runs `fn` and answers the entries it added to `orgId`'s log. */
async function added(orgId: string, fn: () => Promise<unknown>): Promise<Row[]> {
  const before = new Set((await entries(orgId)).map((e) => e.id));
  await fn();
  return (await entries(orgId)).filter((e) => !before.has(e.id));
}

async function ok<T extends { status: number; body: unknown }>(res: Promise<T> | T, status = 200): Promise<T> {
  const answer = await res;
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

describe("a realistic mix of audited actions", () => {
  it("writes one entry per change, with who, what, from where and the fields changed", async () => {
    const requestId = `audit-${Date.now()}`;
    const [roleChange] = await added(owner.orgId, () =>
      ok(api.request.patch(`/org/members/${member.userId}`).set(as(owner)).set("X-Request-Id", requestId).send({ role: "admin" })),
    );
    expect(roleChange).toMatchObject({
      actor_type: "user",
      actor_id: owner.userId,
      actor_label: owner.email,
      action: "member.role_change",
      target_type: "user",
      target_id: member.userId,
      target_label: member.email,
      user_agent: UA,
      request_id: requestId,
      changes: { role: { before: "member", after: "admin" } },
      details: null,
    });
    expect(roleChange!.ip).toMatch(/127\.0\.0\.1|::1/);
    // A role set to what it already is changes nothing and writes nothing.
    expect(await added(owner.orgId, () => ok(api.request.patch(`/org/members/${member.userId}`).set(as(owner)).send({ role: "admin" })))).toEqual([]);
    await ok(api.request.patch(`/org/members/${member.userId}`).set(as(owner)).send({ role: "member" }));

    // Invites: sent, withdrawn, accepted.
    let invite = await ok(api.request.post("/org/invite").set(as(admin)).send({ email: "pat@example.test", role: "member" }), 201);
    secrets.add(invite.body.invite_url).add(new URL(invite.body.invite_url).searchParams.get("token")!);
    const invites = await ok(api.request.get("/org/invites").set(as(owner)));
    const [revoked] = await added(owner.orgId, () => ok(api.request.delete(`/org/invites/${invites.body[0].id}`).set(as(owner)), 204));
    expect(revoked).toMatchObject({ action: "invite.revoke", target_label: "pat@example.test", changes: { status: { before: "pending", after: "revoked" } } });
    invite = await ok(api.request.post("/org/invite").set(as(owner)).send({ email: "quinn@example.test", role: "admin" }), 201);
    const token = new URL(invite.body.invite_url).searchParams.get("token")!;
    secrets.add(invite.body.invite_url).add(token);
    const [accepted] = await added(owner.orgId, () => ok(api.request.post("/invite/accept").set("User-Agent", UA).send({ token, password: TEST_PASSWORD })));
    expect(accepted).toMatchObject({
      action: "invite.accept",
      actor_label: "quinn@example.test",
      changes: { role: { before: null, after: "admin" } },
      details: { account: "created" },
    });

    // API keys, made and revoked.
    const key = await ok(api.request.post("/api-keys").set(as(member)).send({ name: "billing-service" }), 201);
    secrets.add(key.body.key);
    const [keyRevoked] = await added(owner.orgId, () => ok(api.request.delete(`/api-keys/${key.body.id}`).set(as(admin)), 204));
    expect(keyRevoked).toMatchObject({ action: "api_key.revoke", actor_id: admin.userId, target_id: key.body.id, target_label: "billing-service" });
    const service = await ok(api.request.post("/api-keys").set(as(owner)).send({ name: "worker-feed" }), 201);
    secrets.add(service.body.key);

    // Webhook endpoints: the URL's path and query may be the receiver's secret; only the host is recorded.
    const hook = await ok(
      api.request
        .post("/webhook-endpoints")
        .set(as(owner))
        .send({ url: "https://hooks.example.test/T000/B000/XXXXSECRETPATH?token=abc123", events: ["job.failed"] }),
      201,
    );
    secrets.add(hook.body.secret).add("XXXXSECRETPATH").add("abc123");
    const rotated = await ok(api.request.post(`/webhook-endpoints/${hook.body.id}/rotate-secret`).set(as(admin)));
    secrets.add(rotated.body.secret);
    await ok(api.request.delete(`/webhook-endpoints/${hook.body.id}`).set(as(owner)), 204);

    // Schedules, by an API key: payloads are never recorded, an edit of one is only noted.
    const job = { type: "send_email", payload: { to: "ops@example.test", subject: PAYLOAD_MARKER, body: `${PAYLOAD_MARKER} body` } };
    const keyed = { "X-API-Key": service.body.key, "User-Agent": UA };
    const schedule = await ok(api.request.post("/schedules").set(keyed).send({ name: "Nightly", cron: "0 2 * * *", job }), 201);
    const [edited] = await added(owner.orgId, () =>
      ok(
        api.request
          .patch(`/schedules/${schedule.body.id}`)
          .set(keyed)
          .send({ cron: "30 2 * * *", job: { ...job, payload: { ...job.payload, subject: `${PAYLOAD_MARKER}!` } } }),
      ),
    );
    expect(edited).toMatchObject({
      actor_type: "api_key",
      actor_label: "worker-feed",
      action: "schedule.update",
      target_label: "Nightly",
      changes: { cron: { before: "0 2 * * *", after: "30 2 * * *" } },
      details: { payload_changed: true },
    });
    await ok(api.request.delete(`/schedules/${schedule.body.id}`).set(keyed), 204);

    // Jobs: creating one is not audited (jobs are their own record); cancel, replay and bulk are.
    const created = await added(owner.orgId, async () => {
      for (let i = 0; i < 3; i++) await ok(api.request.post("/jobs").set(keyed).send(job), 202);
    });
    expect(created).toEqual([]);
    const listed = await ok(api.request.get("/jobs?limit=3").set(keyed));
    const [one, ...rest] = listed.body.map((j: { id: string }) => j.id) as string[];
    const [cancelled] = await added(owner.orgId, () => ok(api.request.post(`/jobs/${one}/cancel`).set(as(member))));
    expect(cancelled).toMatchObject({
      action: "job.cancel",
      target_type: "job",
      target_id: one,
      changes: { status: { before: "pending", after: "cancelled" } },
    });
    const [replayed] = await added(owner.orgId, () => ok(api.request.post(`/jobs/${one}/replay`).set(keyed), 202));
    expect(replayed).toMatchObject({ action: "job.replay", target_id: one, details: { replay_id: expect.any(String) } });
    const [bulk] = await added(owner.orgId, () =>
      ok(
        api.request
          .post("/jobs/bulk")
          .set(keyed)
          .send({ action: "cancel", filter: { status: "pending", q: PAYLOAD_MARKER } }),
      ),
    );
    expect(bulk).toMatchObject({
      action: "jobs.bulk",
      target_type: null,
      details: { action: "cancel", matched: rest.length + 1, affected: rest.length + 1, has_more: false, filter: { status: "pending", q: "(not recorded)" } },
    });

    // Sessions and passwords.
    const session = await ok(api.request.post("/auth/session").set("User-Agent", UA).send({ email: admin.email, password: TEST_PASSWORD }));
    const cookie = (session.headers["set-cookie"] as unknown as string[])[0]!.split(";")[0]!;
    secrets.add(cookie.split("=")[1]!).add(session.body.csrf_token);
    const newPassword = "a brand new passphrase for the admin";
    secrets.add(newPassword);
    const [changed] = await added(owner.orgId, () =>
      ok(
        api.request
          .post("/auth/password")
          .set("Cookie", cookie)
          .set("X-CSRF-Token", session.body.csrf_token)
          .send({ current_password: TEST_PASSWORD, new_password: newPassword }),
        204,
      ),
    );
    expect(changed).toMatchObject({ action: "password.change", actor_id: admin.userId, changes: null });
    const [loggedOut] = await added(owner.orgId, () =>
      ok(api.request.delete("/auth/session").set("Cookie", cookie).set("X-CSRF-Token", session.body.csrf_token), 204),
    );
    expect(loggedOut).toMatchObject({ action: "session.logout", actor_id: admin.userId });
    const login = await ok(api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD }));
    secrets.add(login.body.token);

    // Single sign-on: saved (its secret sealed, never recorded), then a first sign-in.
    await ok(
      api.request
        .put("/org/sso")
        .set(as(owner))
        .send({ issuer: provider.issuer, client_id: "audit-client", client_secret: SSO_SECRET, email_domains: ["acme-sso.test"] }),
    );
    provider.signInAs("rosa@acme-sso.test");
    const start = await api.request.get("/auth/sso/start").query({ email: "rosa@acme-sso.test" });
    const back = await fetch(start.headers.location!, { redirect: "manual" });
    const callback = new URL(back.headers.get("location")!);
    const sso = (start.headers["set-cookie"] as unknown as string[])[0]!.split(";")[0]!;
    secrets.add(sso.split("=")[1]!).add(callback.searchParams.get("code")!);
    await ok(api.request.get(callback.pathname + callback.search).set("Cookie", sso), 302);

    // Removing a member.
    const [removed] = await added(owner.orgId, () => ok(api.request.delete(`/org/members/${member.userId}`).set(as(owner)), 204));
    expect(removed).toMatchObject({ action: "member.remove", target_label: member.email, changes: { role: { before: "member", after: null } } });

    const actions = (await entries(owner.orgId)).map((e) => e.action);
    for (const action of [
      "member.role_change",
      "member.invite",
      "invite.revoke",
      "invite.accept",
      "api_key.create",
      "api_key.revoke",
      "webhook_endpoint.create",
      "webhook_endpoint.rotate_secret",
      "webhook_endpoint.delete",
      "schedule.create",
      "schedule.update",
      "schedule.delete",
      "job.cancel",
      "job.replay",
      "jobs.bulk",
      "session.login",
      "session.logout",
      "password.change",
      "sso.update",
      "sso.login",
      "member.remove",
    ]) {
      expect({ action, recorded: actions.includes(action) }).toEqual({ action, recorded: true });
    }
    // Nothing of Acme's reached Globex's log.
    expect(await entries(other.orgId)).toEqual([]);
  });

  it("records a failed login in the organizations of the account it named, and nowhere for an unknown e-mail", async () => {
    const both = await addMember(api.database.db, api.deps.config, other.orgId, "member", admin.userId);
    const count = async () => [(await entries(owner.orgId)).length, (await entries(other.orgId)).length];
    const [acmeBefore, globexBefore] = await count();
    expectError(await api.request.post("/auth/login").send({ email: both.email, password: "not the password at all" }), 401, "unauthorized");
    expect(await count()).toEqual([acmeBefore! + 1, globexBefore! + 1]);
    expectError(
      await api.request.post("/auth/session").send({ email: both.email, password: "not the password at all", org_id: other.orgId }),
      401,
      "unauthorized",
    );
    expect(await count()).toEqual([acmeBefore! + 1, globexBefore! + 2]);
    const last = (await entries(other.orgId)).at(-1)!;
    expect(last).toMatchObject({
      action: "session.login_failed",
      actor_id: both.userId,
      actor_label: both.email,
      details: { method: "password", reason: "wrong_password" },
    });
    expectError(await api.request.post("/auth/login").send({ email: "nobody-here@example.test", password: "whatever it is, long" }), 401, "unauthorized");
    const { rows } = await api.database.db.pool.query("SELECT 1 FROM audit_log WHERE actor_label = 'nobody-here@example.test'");
    expect(rows).toEqual([]);
  });

  it("holds no password, token, secret, key or payload in any entry (docs/reference/robustness.md#r44)", async () => {
    const { rows } = await api.database.db.pool.query<{ entry: string }>("SELECT row_to_json(a)::text AS entry FROM audit_log a");
    expect(rows.length).toBeGreaterThan(20);
    const everything = rows.map((r) => r.entry).join("\n");
    for (const secret of secrets)
      expect({ secret: secret.slice(0, 12), found: everything.includes(secret) }).toEqual({ secret: secret.slice(0, 12), found: false });
    expect(everything).not.toContain(PAYLOAD_MARKER);
    // Shapes, whatever their value: API keys, webhook secrets, JWTs, bcrypt hashes.
    for (const shape of [/cvk_[0-9A-Za-z]{20,}/, /whsec_[A-Za-z0-9+/]{20,}/, /eyJ[\w-]{10,}\.[\w-]{10,}\./, /\$2[aby]\$\d\d\$/])
      expect(everything).not.toMatch(shape);
  });
});

describe("a change that fails", () => {
  it("writes no entry when it is refused", async () => {
    const t = await createOrg(api.database.db, api.deps.config);
    const m = await addMember(api.database.db, api.deps.config, t.orgId, "member");
    const before = await entries(t.orgId);
    const refusals = [
      api.request.patch(`/org/members/${t.userId}`).set(as(t)).send({ role: "member" }),
      api.request.patch(`/org/members/${newId()}`).set(as(t)).send({ role: "admin" }),
      api.request.delete(`/org/members/${t.userId}`).set(as(t)),
      api.request.post("/org/invite").set(as(t)).send({ email: m.email, role: "member" }),
      api.request.post("/org/invite").set(as(m)).send({ email: "x@example.test", role: "member" }),
      api.request.delete(`/org/invites/${newId()}`).set(as(t)),
      api.request.delete(`/api-keys/${newId()}`).set(as(t)),
      api.request
        .post("/schedules")
        .set(as(t))
        .send({ name: "Bad", cron: "61 * * * *", job: { type: "send_email", payload: {} } }),
      api.request
        .post("/webhook-endpoints")
        .set(as(t))
        .send({ url: "http://127.0.0.1/x", events: ["*"] }),
      api.request.post("/auth/password").set(as(m)).send({ current_password: "the wrong current password", new_password: "a perfectly fine new one" }),
      api.request.post(`/jobs/${newId()}/cancel`).set(as(t)),
      api.request
        .put("/org/sso")
        .set(as(t))
        .send({ issuer: "http://127.0.0.1:1", client_id: "c", client_secret: "s", email_domains: ["fail.test"] }),
    ];
    for (const res of await Promise.all(refusals)) expect(res.status).toBeGreaterThanOrEqual(400);
    // A failed login is a record of its own, not a change: it is the only kind expected here.
    expect((await entries(t.orgId)).filter((e) => e.action !== "session.login_failed")).toEqual(before);
  });

  it("writes no entry, and changes nothing, when the entry cannot be written (one transaction)", async () => {
    const t = await createOrg(api.database.db, api.deps.config);
    const m = await addMember(api.database.db, api.deps.config, t.orgId, "member");
    // A test-only trigger that makes this one organization's entries fail to insert.
    await api.database.db.pool.query(`
      CREATE FUNCTION audit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.org_id = '${t.orgId}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER audit_test_refuse BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_test_refuse();`);
    try {
      expect((await api.request.patch(`/org/members/${m.userId}`).set(as(t)).send({ role: "admin" })).status).toBe(500);
      expect((await api.request.delete(`/org/members/${m.userId}`).set(as(t))).status).toBe(500);
      expect((await api.request.post("/api-keys").set(as(t)).send({ name: "never" })).status).toBe(500);
      const role = await api.database.db.prisma.membership.findUnique({ where: { orgId_userId: { orgId: t.orgId, userId: m.userId } } });
      expect(role?.role).toBe("member");
      expect(await api.database.db.prisma.apiKey.count({ where: { orgId: t.orgId } })).toBe(0);
    } finally {
      await api.database.db.pool.query("DROP TRIGGER audit_test_refuse ON audit_log; DROP FUNCTION audit_test_refuse();");
    }
    expect(await entries(t.orgId)).toEqual([]);
  });
});

describe("append-only (docs/reference/robustness.md#r44)", () => {
  it("has no request that changes or deletes an entry", async () => {
    const snapshot = await entries(owner.orgId);
    for (const method of ["post", "put", "patch", "delete"] as const) {
      const res = await api.request[method]("/audit-log").set(as(owner)).send({});
      expectError(res, 405, "method_not_allowed");
      expectError(await api.request[method](`/audit-log/${snapshot[0]!.id}`).set(as(owner)).send({}), 404, "not_found");
    }
    // Every entry is as it was; only new ones may have been added.
    const now = await entries(owner.orgId);
    expect(now.slice(0, snapshot.length)).toEqual(snapshot);
  });

  it("is refused by Postgres too: UPDATE, DELETE and TRUNCATE, and retention's DELETE of anything younger than its cut-off", async () => {
    const { pool } = api.database.db;
    const count = async () => Number((await pool.query<{ n: string }>("SELECT count(*) AS n FROM audit_log")).rows[0]!.n);
    const total = await count();
    await expect(pool.query("UPDATE audit_log SET action = 'x'")).rejects.toThrow(/cannot be changed or deleted \(UPDATE\)/);
    await expect(pool.query("DELETE FROM audit_log")).rejects.toThrow(/cannot be changed or deleted \(DELETE\)/);
    await expect(pool.query("TRUNCATE audit_log")).rejects.toThrow(/cannot be changed or deleted \(TRUNCATE\)/);
    // A cut-off in the future, or less than a day old, lets nothing through.
    const client = await pool.connect();
    try {
      for (const cutOff of ["2999-01-01T00:00:00Z", new Date(Date.now() - 3_600_000).toISOString()]) {
        await client.query("BEGIN");
        await client.query("SELECT set_config('conveyor.audit_delete_before', $1, true)", [cutOff]);
        await expect(client.query("DELETE FROM audit_log")).rejects.toThrow(/cannot be changed or deleted/);
        await client.query("ROLLBACK");
      }
    } finally {
      client.release();
    }
    expect(await count()).toBe(total);
  });
});

describe("GET /audit-log", () => {
  it("answers owners and admins in the documented shape, newest first, and refuses members and API keys", async () => {
    const res = await ok(api.request.get("/audit-log").set(as(owner)));
    expect(res.body.length).toBeGreaterThan(10);
    for (const entry of res.body) expect(responseSchemas.AuditEntry.validate(entry).error).toBeUndefined();
    const times = res.body.map((e: { time: string }) => e.time);
    expect([...times].sort().reverse()).toEqual(times);
    // The newest role change: the member made a member again.
    expect(res.body.find((e: { action: string }) => e.action === "member.role_change")).toMatchObject({
      actor: { type: "user", id: owner.userId, email: owner.email },
      target: { type: "user", id: member.userId, email: member.email },
      changes: { role: { before: "admin", after: "member" } },
    });
    const bystander = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    expectError(await api.request.get("/audit-log").set(as(bystander)), 403, "forbidden");
    const { key } = await createApiKey(api.database.db, owner);
    expectError(await api.request.get("/audit-log").set("X-API-Key", key), 403, "forbidden");
    const another = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
    expect((await ok(api.request.get("/audit-log").set(as(another)))).body.length).toBe(res.body.length);
  });

  it("never shows another organization's entries, whatever the filter", async () => {
    const theirs = await ok(api.request.get("/audit-log?limit=1000").set(as(other)));
    const acmeIds = new Set((await entries(owner.orgId)).map((e) => e.id));
    expect(theirs.body.filter((e: { id: string }) => acmeIds.has(e.id))).toEqual([]);
    const byActor = await ok(api.request.get(`/audit-log?actor_id=${owner.userId}`).set(as(other)));
    expect(byActor.body).toEqual([]);
    const byTarget = await ok(api.request.get(`/audit-log?target_id=${member.userId}`).set(as(other)));
    expect(byTarget.body).toEqual([]);
  });

  it("filters by actor, action (or its prefix), target and time, and pages with Link keeping the filters", async () => {
    const all = (await entries(owner.orgId)).reverse();
    const get = async (query: string) => (await ok(api.request.get(`/audit-log?${query}`).set(as(owner)))).body.map((e: { id: string }) => e.id);
    expect(await get(`actor_id=${admin.userId}&limit=1000`)).toEqual(all.filter((e) => e.actor_id === admin.userId).map((e) => e.id));
    expect(await get("action=member.&limit=1000")).toEqual(all.filter((e) => e.action.startsWith("member.")).map((e) => e.id));
    expect(await get("action=member.role_change&limit=1000")).toEqual(all.filter((e) => e.action === "member.role_change").map((e) => e.id));
    expect(await get("action=nothing.like.this")).toEqual([]);
    expect(await get(`target_id=${member.userId}&limit=1000`)).toEqual(all.filter((e) => e.target_id === member.userId).map((e) => e.id));
    const middle = all[Math.floor(all.length / 2)]!.time;
    expect(await get(`before=${middle.toISOString()}&limit=1000`)).toEqual(all.filter((e) => e.time < middle).map((e) => e.id));
    expect(await get(`after=${middle.toISOString()}&limit=1000`)).toEqual(all.filter((e) => e.time >= middle).map((e) => e.id));

    // Pages of 4 of the member.* entries, following Link, give exactly the filtered list.
    const expected = all.filter((e) => e.action.startsWith("member.")).map((e) => e.id);
    const seen: string[] = [];
    let next: string | null = "/audit-log?action=member.&limit=2";
    while (next) {
      const res = await ok(api.request.get(next).set(as(owner)));
      seen.push(...res.body.map((e: { id: string }) => e.id));
      const link = res.headers.link as string | undefined;
      next = link ? new URL(/<([^>]+)>/.exec(link)![1]!).pathname + new URL(/<([^>]+)>/.exec(link)![1]!).search : null;
      if (next) expect(next).toContain("action=member.");
    }
    expect(seen).toEqual(expected);
  });

  it("refuses malformed filters with 400 naming them", async () => {
    for (const [query, path] of [
      ["actor_id=nope", "query.actor_id"],
      ["target_id=1", "query.target_id"],
      ["after=yesterday", "query.after"],
      ["action=Member", "query.action"],
      ["cursor=garbage", "query.cursor"],
      ["limit=0", "query.limit"],
      ["colour=blue", "query.colour"],
    ]) {
      const res = await api.request.get(`/audit-log?${query}`).set(as(owner));
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details[0].path).toBe(path);
    }
  });
});
