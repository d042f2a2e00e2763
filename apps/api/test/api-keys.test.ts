// API keys (docs/reference/tenants.md#authentication, docs/reference/robustness.md#r11, docs/reference/robustness.md#r12, docs/reference/robustness.md#r16, docs/reference/robustness.md#r19): shown once, stored as SHA-256, listed by role, revoked
// by their creator or an owner/admin, refused off the job endpoints, and dead within 5 s of revocation.
import { createHash } from "node:crypto";
import express from "express";
import supertest from "supertest";
import { newId } from "@conveyor/db";
import { errorHandler } from "../src/middleware/error-handler";
import { API_KEY_CACHE_MS, createAuthenticator } from "../src/middleware/authenticate";
import { requestContext } from "../src/middleware/request-context";
import { expectError } from "./support/expect-error";
import { addMember, createOrg, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
/** A route that accepts API keys like the job endpoints do, behind the real authenticator with its cache. */
let probe: ReturnType<typeof supertest>;
beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
  const authenticate = createAuthenticator(api.deps);
  const app = express()
    .use(requestContext(api.deps.logger))
    .get("/probe", authenticate("job"), (req, res) => res.json(req.auth))
    .use(errorHandler);
  probe = supertest(app);
});
afterAll(() => api.close());

const keys: string[] = [];
const bearer = (m: TestMember) => ["Authorization", `Bearer ${m.token}`] as const;

async function create(member: TestMember, name = "ci deploys") {
  const res = await api.request
    .post("/api-keys")
    .set(...bearer(member))
    .send({ name });
  expect(res.status).toBe(201);
  keys.push(res.body.key);
  return res.body as { id: string; name: string; prefix: string; key: string; created_at: string };
}

async function team() {
  const owner = await createOrg(api.database.db, api.deps.config);
  const admin = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
  const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  const member2 = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  return { owner, admin, member, member2 };
}

describe("POST /api-keys", () => {
  it("returns the key once, cvk_ + base62, with its first 8 characters as prefix, for every role", async () => {
    const t = await team();
    for (const caller of [t.owner, t.admin, t.member]) {
      const created = await create(caller, `key of ${caller.role}`);
      expect(created).toEqual({
        id: expect.any(String),
        name: `key of ${caller.role}`,
        prefix: created.key.slice(0, 8),
        role: "member",
        key: expect.stringMatching(/^cvk_[0-9A-Za-z]{43}$/),
        created_at: expect.stringMatching(/Z$/),
      });
      const res = await probe.get("/probe").set("X-API-Key", created.key);
      expect(res.body).toMatchObject({ kind: "api_key", orgId: t.owner.orgId, userId: caller.userId, role: "member", apiKeyId: created.id });
    }
  });

  it("stores only the SHA-256 and the prefix", async () => {
    const t = await team();
    const created = await create(t.owner);
    const stored = await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(Buffer.from(stored.keyHash).equals(createHash("sha256").update(created.key).digest())).toBe(true);
    const { rows } = await api.database.db.pool.query("SELECT row_to_json(k)::text AS row FROM api_keys k WHERE id = $1", [created.id]);
    expect(rows[0].row).not.toContain(created.key.slice(8));
  });

  it("refuses an API key as the credential with 403", async () => {
    const t = await team();
    const created = await create(t.owner);
    expectError(await api.request.post("/api-keys").set("X-API-Key", created.key).send({ name: "minted by a key" }), 403, "forbidden");
  });

  it("refuses unknown fields (org_id, created_by) and an empty name with 400", async () => {
    const t = await team();
    const other = await createOrg(api.database.db, api.deps.config);
    for (const body of [{ name: "x", org_id: other.orgId }, { name: "x", created_by: other.userId }, { name: "" }, {}]) {
      expectError(
        await api.request
          .post("/api-keys")
          .set(...bearer(t.owner))
          .send(body),
        400,
        "validation_failed",
      );
    }
    expect(await api.database.db.prisma.apiKey.count({ where: { orgId: { in: [t.owner.orgId, other.orgId] } } })).toBe(0);
  });
});

describe("GET /api-keys", () => {
  it("shows owners and admins every live key of the org, members only their own, and never the key or its hash", async () => {
    const t = await team();
    const other = await createOrg(api.database.db, api.deps.config);
    const foreign = await create(other);
    const ownerKey = await create(t.owner);
    const memberKey = await create(t.member);
    const member2Key = await create(t.member2);
    const shape = (k: { id: string; name: string; prefix: string }, by: TestMember) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      role: "member",
      created_by: by.userId,
      created_by_email: by.email,
      created_at: expect.any(String),
      last_used_at: null,
    });
    for (const caller of [t.owner, t.admin]) {
      const res = await api.request.get("/api-keys").set(...bearer(caller));
      expect(res.body).toEqual([shape(ownerKey, t.owner), shape(memberKey, t.member), shape(member2Key, t.member2)]);
      for (const k of [ownerKey, memberKey, member2Key, foreign]) expect(res.text).not.toContain(k.key);
      expect(res.text).not.toMatch(/hash/i);
    }
    expect((await api.request.get("/api-keys").set(...bearer(t.member))).body).toEqual([shape(memberKey, t.member)]);
    expect((await api.request.get("/api-keys").set(...bearer(other))).body).toEqual([shape(foreign, other)]);
  });

  it("records last_used_at when a key is used", async () => {
    const t = await team();
    const created = await create(t.member);
    expect((await probe.get("/probe").set("X-API-Key", created.key)).status).toBe(200);
    const listed = await waitForValue(async () => (await api.request.get("/api-keys").set(...bearer(t.member))).body[0].last_used_at);
    expect(listed).toMatch(/Z$/);
  });

  it("refuses an API key with 403", async () => {
    const t = await team();
    const created = await create(t.owner);
    expectError(await api.request.get("/api-keys").set("X-API-Key", created.key), 403, "forbidden");
  });
});

describe("DELETE /api-keys/{id}", () => {
  it.each([
    ["owner", "member", 204],
    ["admin", "member", 204],
    ["admin", "owner", 204],
    ["member", "member", 204],
    ["member", "member2", 403],
    ["member", "owner", 403],
  ] as const)("%s revoking a key of %s gets %i", async (callerRole, creatorRole, status) => {
    const t = await team();
    const created = await create(t[creatorRole]);
    const caller = callerRole === "member" && creatorRole === "member" ? t.member : t[callerRole];
    const res = await api.request.delete(`/api-keys/${created.id}`).set(...bearer(caller));
    expect(res.status).toBe(status);
    const stored = await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    if (status === 204) expect(stored.revokedAt).toBeInstanceOf(Date);
    else {
      expectError(res, 403, "forbidden");
      expect(stored.revokedAt).toBeNull();
    }
  });

  it("answers 404 for another org's key, a random id, a malformed id and an already revoked key, identically", async () => {
    const t = await team();
    const other = await createOrg(api.database.db, api.deps.config);
    const foreign = await create(other);
    const mine = await create(t.owner);
    expect((await api.request.delete(`/api-keys/${mine.id}`).set(...bearer(t.owner))).status).toBe(204);
    const answers = await Promise.all([foreign.id, newId(), "nope", mine.id].map((id) => api.request.delete(`/api-keys/${id}`).set(...bearer(t.owner))));
    for (const res of answers) expectError(res, 404, "not_found");
    expect(new Set(answers.map((r) => r.text)).size).toBe(1);
    expect((await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: foreign.id } })).revokedAt).toBeNull();
    expect((await probe.get("/probe").set("X-API-Key", foreign.key)).status).toBe(200);
  });

  it("refuses an API key as the credential with 403", async () => {
    const t = await team();
    const created = await create(t.owner);
    expectError(await api.request.delete(`/api-keys/${created.id}`).set("X-API-Key", created.key), 403, "forbidden");
  });

  it("stops a revoked key within 5 seconds (401), even one the authenticator has cached", async () => {
    expect(API_KEY_CACHE_MS).toBeLessThan(5_000);
    const t = await team();
    const created = await create(t.member);
    expect((await probe.get("/probe").set("X-API-Key", created.key)).status).toBe(200);
    expect((await api.request.delete(`/api-keys/${created.id}`).set(...bearer(t.member))).status).toBe(204);
    api.clock.advance(5_000);
    expectError(await probe.get("/probe").set("X-API-Key", created.key), 401, "unauthorized");
  });
});

describe("API keys as credentials", () => {
  it("are refused off the job endpoints with 403 (/me, /org/*, /api-keys)", async () => {
    const t = await team();
    const created = await create(t.owner);
    expectError(await api.request.get("/me").set("X-API-Key", created.key), 403, "forbidden");
    expectError(await api.request.get("/org/members").set("X-API-Key", created.key), 403, "forbidden");
    expectError(await api.request.post("/org/invite").set("X-API-Key", created.key).send({ email: "a@b.test", role: "member" }), 403, "forbidden");
  });

  it("stop working when their creator is removed from the org (revoked with the membership)", async () => {
    const t = await team();
    const created = await create(t.member);
    expect((await api.request.delete(`/org/members/${t.member.userId}`).set(...bearer(t.owner))).status).toBe(204);
    api.clock.advance(5_000);
    expectError(await probe.get("/probe").set("X-API-Key", created.key), 401, "unauthorized");
    expect((await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } })).revokedAt).toBeInstanceOf(Date);
  });

  it("lose to a bearer token when both headers are sent", async () => {
    const t = await team();
    const created = await create(t.member);
    const res = await probe
      .get("/probe")
      .set("X-API-Key", created.key)
      .set(...bearer(t.admin));
    expect(res.body).toMatchObject({ kind: "jwt", userId: t.admin.userId, role: "admin" });
    expectError(await probe.get("/probe").set("X-API-Key", created.key).set("Authorization", "Bearer broken"), 401, "unauthorized");
  });

  it("are refused with 401 when unknown or malformed", async () => {
    expectError(await probe.get("/probe").set("X-API-Key", `cvk_${"A".repeat(43)}`), 401, "unauthorized");
    expectError(await probe.get("/probe").set("X-API-Key", "garbage"), 401, "unauthorized");
  });

  it("never appear in a log line", async () => {
    expect(keys.length).toBeGreaterThan(10);
    const logs = api.logs();
    expect(logs).toContain("POST /api-keys 201");
    for (const key of keys) expect(logs).not.toContain(key);
  });
});

async function waitForValue<T>(probeFn: () => Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probeFn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error("value never appeared");
    await new Promise((r) => setTimeout(r, 50));
  }
}
