// Console sessions (docs/reference/tenants.md#the-console, docs/reference/tenants.md#team-api-for-the-console; docs/reference/robustness.md#r38): the cookie's flags, only its hash at rest, the CSRF defence on every
// state-changing method, bearer and API-key precedence, expiry on the API's clock, logout, switching organizations,
// password changes and removals ending sessions, and a second organization that a session never sees.
import { createHash } from "node:crypto";
import type { Test } from "supertest";
import { newId } from "@conveyor/db";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";
import {
  addMember,
  createApiKey,
  createOrg,
  createSecondOrg,
  startTestApi,
  TEST_PASSWORD,
  uniqueEmail,
  type SecondOrg,
  type TestApi,
  type TestMember,
} from "@conveyor/api/testing";

let api: TestApi;
let second: SecondOrg;
beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
  second = await createSecondOrg(api.database.db);
  await second.watch(api.get);
});
afterAll(() => api.close());

type Session = { token: string; cookie: string; csrf: string; setCookie: string; body: Record<string, any> };
const secrets: string[] = [];

/** Logs `member` in to a console session through the API (in `orgId` when given). */
async function login(member: Pick<TestMember, "email">, orgId?: string, on: TestApi = api): Promise<Session> {
  const res = await on.request.post("/auth/session").send({ email: member.email, password: TEST_PASSWORD, ...(orgId ? { org_id: orgId } : {}) });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  const setCookie = (res.headers["set-cookie"] as unknown as string[])[0]!;
  const token = /^conveyor_session=([^;]*)/.exec(setCookie)![1]!;
  secrets.push(token, res.body.csrf_token);
  return { token, cookie: `conveyor_session=${token}`, csrf: res.body.csrf_token, setCookie, body: res.body };
}

const as = (req: Test, s: Session, csrf: string | null = s.csrf) => {
  req.set("Cookie", s.cookie);
  return csrf === null ? req : req.set("X-CSRF-Token", csrf);
};

const sha256 = (text: string) => createHash("sha256").update(text).digest();

describe("POST /auth/session", () => {
  it("answers who, where, every org and a CSRF token, and sets an HttpOnly, SameSite=Strict cookie for SESSION_TTL", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, "Session Org");
    const s = await login(owner);
    expect(s.body).toEqual({
      user: { id: owner.userId, email: owner.email },
      org: { id: owner.orgId, name: "Session Org" },
      role: "owner",
      orgs: [{ id: owner.orgId, name: "Session Org", role: "owner" }],
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(responseSchemas.Session.validate(s.body).error).toBeUndefined();
    expect(s.setCookie).toMatch(/^conveyor_session=[A-Za-z0-9_-]{43}; /);
    const attributes = s.setCookie.split("; ").slice(1).sort();
    // Default SESSION_TTL is 12 h; no Secure flag over plain http outside production.
    expect(attributes).toEqual(["HttpOnly", "Max-Age=43200", "Path=/", "SameSite=Strict"]);
    expect(s.csrf).not.toBe(s.token);
  });

  it("stores only the SHA-256 of the cookie's token, and the token appears in no response body", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const rows = await api.database.db.pool.query("SELECT * FROM sessions WHERE user_id = $1", [owner.userId]);
    expect(rows.rows).toHaveLength(1);
    const row = rows.rows[0];
    expect(row.token_hash).toEqual(sha256(s.token));
    expect(JSON.stringify(row)).not.toContain(s.token);
    expect(JSON.stringify(s.body)).not.toContain(s.token);
    expect(row).toMatchObject({ org_id: owner.orgId, credential_version: 0 });
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(12 * 3600 * 1000);
    const again = await as(api.request.get("/auth/session"), s, null);
    expect(again.text).not.toContain(s.token);
  });

  it("gives the same 401 as POST /auth/login for a wrong password and an unknown email", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const bodies = [];
    for (const path of ["/auth/login", "/auth/session"]) {
      for (const body of [
        { email: owner.email, password: "not the right password at all" },
        { email: uniqueEmail("ghost"), password: TEST_PASSWORD },
      ]) {
        const res = await api.request.post(path).send(body);
        expectError(res, 401, "unauthorized");
        expect(res.headers["set-cookie"]).toBeUndefined();
        bodies.push(res.text);
      }
    }
    expect(new Set(bodies).size).toBe(1);
  });

  it("shares the account's failed-login budget with POST /auth/login", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const wrong = { email: owner.email, password: "not the right password at all" };
    for (let i = 0; i < 5; i++) expectError(await api.request.post("/auth/login").send(wrong), 401, "unauthorized");
    for (let i = 0; i < 5; i++) expectError(await api.request.post("/auth/session").send(wrong), 401, "unauthorized");
    const locked = await api.request.post("/auth/session").send({ email: owner.email, password: TEST_PASSWORD });
    expectError(locked, 429, "rate_limited");
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("starts in org_id when given; 404 for an organization the user is not in, like a random id", async () => {
    const first = await createOrg(api.database.db, api.deps.config, "First");
    const other = await createOrg(api.database.db, api.deps.config, "Other");
    await addMember(api.database.db, api.deps.config, other.orgId, "member", first.userId);
    const s = await login(first, other.orgId);
    expect(s.body).toMatchObject({ org: { id: other.orgId, name: "Other" }, role: "member" });
    const foreign = await api.request.post("/auth/session").send({ email: first.email, password: TEST_PASSWORD, org_id: second.orgId });
    const random = await api.request.post("/auth/session").send({ email: first.email, password: TEST_PASSWORD, org_id: newId() });
    expectError(foreign, 404, "not_found");
    expect(foreign.body).toEqual(random.body);
    expect(foreign.headers["set-cookie"]).toBeUndefined();
  });

  it("ends the session of the cookie sent along when the browser logs in again", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const before = await login(owner);
    const res = await api.request.post("/auth/session").set("Cookie", before.cookie).send({ email: owner.email, password: TEST_PASSWORD });
    expect(res.status).toBe(200);
    secrets.push(res.body.csrf_token);
    expectError(await as(api.request.get("/auth/session"), before, null), 401, "unauthorized");
    expect(await api.database.db.prisma.session.count({ where: { userId: owner.userId } })).toBe(1);
  });

  it("refuses unknown fields with 400", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    expectError(await api.request.post("/auth/session").send({ email: owner.email, password: TEST_PASSWORD, role: "owner" }), 400, "validation_failed");
  });
});

describe("the cookie's flags in production and behind https", () => {
  it("adds Secure when PUBLIC_URL is https, and when NODE_ENV=production; Max-Age follows SESSION_TTL", async () => {
    for (const env of [
      { PUBLIC_URL: "https://conveyor.example.com", SESSION_TTL: "30m" },
      { NODE_ENV: "production", SESSION_TTL: "30m", WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString("base64") },
    ]) {
      const other = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0", ...env });
      try {
        const owner = await createOrg(other.database.db, other.deps.config);
        const s = await login(owner, undefined, other);
        expect(s.setCookie.split("; ").slice(1).sort()).toEqual(["HttpOnly", "Max-Age=1800", "Path=/", "SameSite=Strict", "Secure"]);
        const out = await as(other.request.delete("/auth/session"), s);
        expect(out.status).toBe(204);
        expect((out.headers["set-cookie"] as unknown as string[])[0]!.split("; ").sort()).toEqual([
          "HttpOnly",
          "Max-Age=0",
          "Path=/",
          "SameSite=Strict",
          "Secure",
          "conveyor_session=",
        ]);
      } finally {
        await other.close();
      }
    }
  });
});

describe("GET /auth/session", () => {
  it("answers the session body, with the same CSRF token, for the cookie alone", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const res = await as(api.request.get("/auth/session"), s, null);
    expect(res.status).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.body).toEqual(s.body);
  });

  it("is 401 without a cookie, and 401 clearing the cookie for an unknown or malformed one", async () => {
    expectError(await api.request.get("/auth/session"), 401, "unauthorized");
    for (const value of ["A".repeat(43), "not-a-token", ""]) {
      const res = await api.request.get("/auth/session").set("Cookie", `conveyor_session=${value}`);
      expectError(res, 401, "unauthorized");
      expect((res.headers["set-cookie"] as unknown as string[])[0]).toMatch(/^conveyor_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict$/);
    }
  });

  it("takes the cookie only: a bearer token or an API key is not a session", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const { key } = await createApiKey(api.database.db, owner);
    expectError(await api.request.get("/auth/session").set("Authorization", `Bearer ${owner.token}`), 401, "unauthorized");
    expectError(await api.request.get("/auth/session").set("X-API-Key", key), 401, "unauthorized");
  });
});

describe("CSRF (docs/reference/robustness.md#r38)", () => {
  it("refuses every state-changing method made with the cookie without the header, or with a wrong one, and changes nothing", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    const elsewhere = await createOrg(api.database.db, api.deps.config);
    await addMember(api.database.db, api.deps.config, elsewhere.orgId, "member", owner.userId);
    const key = await createApiKey(api.database.db, owner);
    const s = await login(owner);
    const other = await login(member);
    const requests: [string, () => Test][] = [
      ["POST /jobs", () => api.request.post("/jobs").send({ type: "chat_notify", payload: { channel: "#x", text: "y" } })],
      ["PATCH /org/members/{id}", () => api.request.patch(`/org/members/${member.userId}`).send({ role: "admin" })],
      ["DELETE /api-keys/{id}", () => api.request.delete(`/api-keys/${key.id}`)],
      ["POST /auth/session/org", () => api.request.post("/auth/session/org").send({ org_id: elsewhere.orgId })],
      ["DELETE /auth/session", () => api.request.delete("/auth/session")],
    ];
    for (const [what, make] of requests) {
      for (const csrf of [null, "", "x".repeat(43), other.csrf, s.token]) {
        const res = await as(make(), s, csrf);
        expect([what, csrf === null ? "no header" : "wrong header", res.status, res.body?.error?.code]).toEqual([
          what,
          csrf === null ? "no header" : "wrong header",
          403,
          "csrf_failed",
        ]);
      }
    }
    expect(await api.database.db.prisma.job.count({ where: { orgId: owner.orgId } })).toBe(0);
    expect((await api.database.db.prisma.membership.findUniqueOrThrow({ where: { orgId_userId: { orgId: owner.orgId, userId: member.userId } } })).role).toBe(
      "member",
    );
    expect((await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).revokedAt).toBeNull();
    expect((await as(api.request.get("/auth/session"), s, null)).body.org.id).toBe(owner.orgId);

    // With the session's own token, each one goes through.
    const statuses = [];
    for (const [what, make] of requests) statuses.push([what, (await as(make(), s)).status]);
    expect(statuses).toEqual([
      ["POST /jobs", 202],
      ["PATCH /org/members/{id}", 200],
      ["DELETE /api-keys/{id}", 204],
      ["POST /auth/session/org", 200],
      ["DELETE /auth/session", 204],
    ]);
  });

  it("needs no header on GET requests", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    for (const path of ["/me", "/jobs", "/jobs?limit=5", "/org/members", "/org/invites", "/api-keys", "/jobs/stats"]) {
      const res = await as(api.request.get(path), s, null);
      expect([path, res.status]).toEqual([path, 200]);
    }
    expect((await as(api.request.get("/me"), s, null)).body).toEqual({ user: { id: owner.userId, email: owner.email }, org: s.body.org, role: "owner" });
  });

  it("is not asked of a bearer token or an API key, which win over the cookie", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const other = await createOrg(api.database.db, api.deps.config);
    const { key } = await createApiKey(api.database.db, other);
    const s = await login(owner);
    const job = { type: "chat_notify", payload: { channel: "#x", text: "y" } };
    // The bearer token's organization, not the cookie's; no CSRF header needed.
    const viaBearer = await as(api.request.post("/jobs").send(job), s, null).set("Authorization", `Bearer ${other.token}`);
    expect(viaBearer.status).toBe(202);
    expect((await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: viaBearer.body.id } })).orgId).toBe(other.orgId);
    const viaKey = await as(api.request.post("/jobs").send(job), s, null).set("X-API-Key", key);
    expect((await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: viaKey.body.id } })).orgId).toBe(other.orgId);
    // A bad bearer token is refused even with a good cookie; an API key keeps its limits (403 on /me).
    expectError(await as(api.request.get("/me"), s, null).set("Authorization", "Bearer not.a.jwt"), 401, "unauthorized");
    expectError(await as(api.request.get("/me"), s, null).set("X-API-Key", key), 403, "forbidden");
    expect(await api.database.db.prisma.job.count({ where: { orgId: owner.orgId } })).toBe(0);
  });
});

describe("session lifetime", () => {
  it("ends SESSION_TTL after the login, however recently it was used, and the refusal clears the cookie", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const hours = (h: number) => h * 3600 * 1000;
    try {
      api.clock.advance(hours(11));
      expect((await as(api.request.get("/me"), s, null)).status).toBe(200);
      api.clock.advance(hours(1) - 1000);
      expect((await as(api.request.post("/jobs").send({ type: "chat_notify", payload: { channel: "#x", text: "y" } }), s)).status).toBe(202);
      api.clock.advance(1000);
      const res = await as(api.request.get("/me"), s, null);
      expectError(res, 401, "unauthorized");
      expect((res.headers["set-cookie"] as unknown as string[])[0]).toMatch(/^conveyor_session=; Max-Age=0;/);
      expectError(await as(api.request.get("/auth/session"), s, null), 401, "unauthorized");
    } finally {
      api.clock.advance(-hours(12));
    }
  });

  it("records when it was last used", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const seen = async () => (await api.database.db.prisma.session.findFirstOrThrow({ where: { userId: owner.userId } })).lastSeenAt.getTime();
    const first = await seen();
    try {
      api.clock.advance(5 * 60_000);
      await as(api.request.get("/me"), s, null);
      expect(await seen()).toBe(first + 5 * 60_000);
    } finally {
      api.clock.advance(-5 * 60_000);
    }
  });
});

describe("DELETE /auth/session (logout)", () => {
  it("ends this session and clears the cookie; the user's other sessions go on", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const phone = await login(owner);
    const res = await as(api.request.delete("/auth/session"), s);
    expect(res.status).toBe(204);
    expect((res.headers["set-cookie"] as unknown as string[])[0]).toBe("conveyor_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict");
    expectError(await as(api.request.get("/auth/session"), s, null), 401, "unauthorized");
    expectError(await as(api.request.get("/me"), s, null), 401, "unauthorized");
    expect(await api.database.db.prisma.session.count({ where: { tokenHash: new Uint8Array(sha256(s.token)) } })).toBe(0);
    expect((await as(api.request.get("/auth/session"), phone, null)).status).toBe(200);
    expectError(await as(api.request.delete("/auth/session"), s), 401, "unauthorized");
  });
});

describe("POST /auth/session/org", () => {
  it("moves the session to another organization of the user; the next requests act there", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, "Home");
    const away = await createOrg(api.database.db, api.deps.config, "Away");
    await addMember(api.database.db, api.deps.config, away.orgId, "admin", owner.userId);
    const s = await login(owner);
    const res = await as(api.request.post("/auth/session/org").send({ org_id: away.orgId }), s);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...s.body, org: { id: away.orgId, name: "Away" }, role: "admin" });
    expect((await as(api.request.get("/me"), s, null)).body).toMatchObject({ org: { id: away.orgId }, role: "admin" });
    const job = await as(api.request.post("/jobs").send({ type: "chat_notify", payload: { channel: "#x", text: "y" } }), s);
    expect((await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: job.body.id } })).orgId).toBe(away.orgId);
    // Back home.
    expect((await as(api.request.post("/auth/session/org").send({ org_id: owner.orgId }), s)).body.org.id).toBe(owner.orgId);
  });

  it("answers 404 for an organization the user is not a member of, like a random id, and stays where it was", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const foreign = await as(api.request.post("/auth/session/org").send({ org_id: second.orgId }), s);
    const random = await as(api.request.post("/auth/session/org").send({ org_id: newId() }), s);
    expectError(foreign, 404, "not_found");
    expect(foreign.body).toEqual(random.body);
    expect((await as(api.request.get("/auth/session"), s, null)).body.org.id).toBe(owner.orgId);
    expectError(await as(api.request.post("/auth/session/org").send({ org_id: "nope" }), s), 400, "validation_failed");
  });
});

describe("GET /auth/session/job-orgs/:id", () => {
  it("names the other organization of the user that has the job, and none for an id no such organization has", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, "Here");
    const away = await createOrg(api.database.db, api.deps.config, "There");
    const member = await addMember(api.database.db, api.deps.config, away.orgId, "member", owner.userId);
    const theirs = await api.request
      .post("/jobs")
      .set("Authorization", `Bearer ${member.token}`)
      .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } });
    expect(theirs.status).toBe(202);
    const mine = await api.request
      .post("/jobs")
      .set("Authorization", `Bearer ${owner.token}`)
      .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } });
    const s = await login(owner);
    const where = (id: string) => as(api.request.get(`/auth/session/job-orgs/${id}`), s, null);
    const found = await where(theirs.body.id);
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ orgs: [{ id: away.orgId, name: "There", role: "member" }] });
    expect(responseSchemas.JobElsewhere.validate(found.body).error).toBeUndefined();
    expect(found.headers["cache-control"]).toBe("no-store");
    // Nowhere, malformed, the session's own organization's job, and a job of an organization the user is not in.
    for (const id of [newId(), "not-a-job-id", mine.body.id, second.jobId]) expect((await where(id)).body).toEqual({ orgs: [] });
    expectError(await api.request.get(`/auth/session/job-orgs/${theirs.body.id}`).set("Authorization", `Bearer ${owner.token}`), 401, "unauthorized");
  });
});

describe("what ends a session", () => {
  it("a password change ends the user's other sessions and tokens at once, but not the session that asked", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    const laptop = await login(owner);
    const oldToken = owner.token;
    const newPassword = "an entirely new passphrase for this test";
    const res = await as(api.request.post("/auth/password").send({ current_password: TEST_PASSWORD, new_password: newPassword }), s);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    // The caller's session goes on, CSRF token unchanged.
    expect((await as(api.request.get("/auth/session"), s, null)).body).toEqual(s.body);
    expect((await as(api.request.post("/jobs").send({ type: "chat_notify", payload: { channel: "#x", text: "y" } }), s)).status).toBe(202);
    // Everything else of that user is over.
    expectError(await as(api.request.get("/me"), laptop, null), 401, "unauthorized");
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${oldToken}`), 401, "unauthorized");
    expect(await api.database.db.prisma.session.count({ where: { userId: owner.userId } })).toBe(1);
    // The new password logs in; the old one does not.
    expectError(await api.request.post("/auth/session").send({ email: owner.email, password: TEST_PASSWORD }), 401, "unauthorized");
    const fresh = await api.request.post("/auth/login").send({ email: owner.email, password: newPassword });
    expect(fresh.status).toBe(200);
    expect((await api.request.get("/me").set("Authorization", `Bearer ${fresh.body.token}`)).status).toBe(200);
  });

  it("a removal from the organization ends the member's session there at once, not in their other organization", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    const elsewhere = await createOrg(api.database.db, api.deps.config);
    await addMember(api.database.db, api.deps.config, elsewhere.orgId, "member", member.userId);
    const here = await login(member, owner.orgId);
    const there = await login(member, elsewhere.orgId);
    const boss = await login(owner);
    expect((await as(api.request.get("/jobs"), here, null)).status).toBe(200);
    expect((await as(api.request.delete(`/org/members/${member.userId}`), boss)).status).toBe(204);
    expectError(await as(api.request.get("/jobs"), here, null), 401, "unauthorized");
    expectError(await as(api.request.get("/auth/session"), here, null), 401, "unauthorized");
    expect((await as(api.request.get("/jobs"), there, null)).status).toBe(200);
    expect(await api.database.db.prisma.session.count({ where: { userId: member.userId } })).toBe(1);
  });

  it("a membership deleted behind the API's back ends the session too: membership is read on every request", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
    const s = await login(member);
    await api.database.db.prisma.membership.delete({ where: { orgId_userId: { orgId: owner.orgId, userId: member.userId } } });
    expectError(await as(api.request.get("/me"), s, null), 401, "unauthorized");
  });
});

describe("organization isolation", () => {
  it("a session of one organization never sees another's jobs, members or keys (404 for their ids)", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const s = await login(owner);
    for (const path of [`/jobs/${second.jobId}`, `/jobs/${second.jobId}/logs`, `/jobs/${second.jobId}/artifact`]) {
      expectError(await as(api.request.get(path), s, null), 404, "not_found");
    }
    expect((await as(api.request.get("/jobs"), s, null)).body).toEqual([]);
    const members = await as(api.request.get("/org/members"), s, null);
    expect(members.body.map((m: { id: string }) => m.id)).toEqual([owner.userId]);
    expect((await as(api.request.get("/api-keys"), s, null)).body).toEqual([]);
    expectError(await as(api.request.post(`/jobs/${second.jobId}/cancel`), s), 404, "not_found");
    await second.expectUntouched({ Cookie: s.cookie });
  });
});

describe("secrets", () => {
  it("never writes a session token or a CSRF token to the logs", () => {
    expect(secrets.length).toBeGreaterThan(10);
    const logs = api.logs();
    expect(logs).toContain("POST /auth/session 200");
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
