// Invites (docs/reference/tenants.md#team-and-roles, docs/reference/robustness.md#c): checking and accepting tokens, expiry on the API's clock, single use
// under concurrency, re-invites, the existing-account rule, and tokens that exist only as hashes.
import { createHash } from "node:crypto";
import { expectError } from "./support/expect-error";
import { addMember, createOrg, TEST_PASSWORD, uniqueEmail, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
});
afterAll(() => api.close());

const NEW_PASSWORD = "a brand new long passphrase";
const inviteTokens: string[] = [];
const issuedJwts: string[] = [];

async function invite(inviter: TestMember, email = uniqueEmail("invitee"), role = "member") {
  const res = await api.request.post("/org/invite").set("Authorization", `Bearer ${inviter.token}`).send({ email, role });
  expect(res.status).toBe(201);
  const token = new URL(res.body.invite_url).searchParams.get("token")!;
  inviteTokens.push(token);
  return { ...res.body, token } as { invite_url: string; email: string; expires_at: string; token: string };
}

async function accept(token: string, password = NEW_PASSWORD) {
  const res = await api.request.post("/invite/accept").send({ token, password });
  if (res.status === 200) issuedJwts.push(res.body.token);
  return res;
}

describe("GET /invite", () => {
  it("shows the email, the organization's name and the expiry of a valid token", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, "Invite Org");
    const created = await invite(owner);
    const res = await api.request.get("/invite").query({ token: created.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ email: created.email, org_name: "Invite Org", role: "member", expires_at: created.expires_at });
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  it("answers 404 invite_not_found for an unknown token and a malformed one", async () => {
    expectError(await api.request.get("/invite").query({ token: "A".repeat(43) }), 404, "invite_not_found");
    expectError(await api.request.get("/invite").query({ token: "short" }), 404, "invite_not_found");
  });

  it("answers 400 validation_failed without a token", async () => {
    expectError(await api.request.get("/invite"), 400, "validation_failed");
  });
});

describe("POST /invite/accept", () => {
  it("creates the account with the password, adds the invited role and returns a JWT scoped to the org", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, "Joinable");
    const other = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner, uniqueEmail("new"), "admin");
    const res = await accept(created.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      token: expect.any(String),
      user: { id: expect.any(String), email: created.email, role: "admin" },
      org: { id: owner.orgId, name: "Joinable" },
    });
    const me = await api.request.get("/me").set("Authorization", `Bearer ${res.body.token}`);
    expect(me.body).toEqual({ user: { id: res.body.user.id, email: created.email }, org: { id: owner.orgId, name: "Joinable" }, role: "admin" });
    const login = await api.request.post("/auth/login").send({ email: created.email, password: NEW_PASSWORD });
    expect(login.status).toBe(200);
    expect(await api.database.db.prisma.membership.count({ where: { orgId: other.orgId } })).toBe(1);
  });

  it("answers a second accept of the same token with 410 invite_used, and GET /invite too", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner);
    expect((await accept(created.token)).status).toBe(200);
    expectError(await accept(created.token), 410, "invite_used");
    expectError(await api.request.get("/invite").query({ token: created.token }), 410, "invite_used");
  });

  it("lets exactly one of 20 concurrent accepts of the same token succeed; the others get 410 invite_used", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner, uniqueEmail("race"));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => accept(created.token, `${NEW_PASSWORD} number ${i}`)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 410, "invite_used");
    expect(await api.database.db.prisma.user.count({ where: { email: created.email } })).toBe(1);
    expect(await api.database.db.prisma.membership.count({ where: { orgId: owner.orgId } })).toBe(2);
    // The winner's password is the one that was stored.
    const winner = results.findIndex((r) => r.status === 200);
    const login = await api.request.post("/auth/login").send({ email: created.email, password: `${NEW_PASSWORD} number ${winner}` });
    expect(login.status).toBe(200);
  });

  it("lets exactly one of 20 concurrent accepts succeed for an existing account as well", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const elsewhere = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner, elsewhere.email);
    const results = await Promise.all(Array.from({ length: 20 }, () => accept(created.token, TEST_PASSWORD)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 410)).toHaveLength(19);
  });

  it("expires after 72 hours on the API's clock: 410 invite_expired, for checking and accepting", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner);
    api.clock.advance(72 * 3600 * 1000 - 1000);
    try {
      expect((await api.request.get("/invite").query({ token: created.token })).status).toBe(200);
      api.clock.advance(1000);
      expectError(await api.request.get("/invite").query({ token: created.token }), 410, "invite_expired");
      expectError(await accept(created.token), 410, "invite_expired");
    } finally {
      api.clock.advance(-72 * 3600 * 1000);
    }
    expect(await api.database.db.prisma.user.count({ where: { email: created.email } })).toBe(0);
  });

  it("invalidates the earlier link when the same email is invited again (410 invite_expired); the new link works", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const email = uniqueEmail("reinvite");
    const first = await invite(owner, email, "admin");
    const second = await invite(owner, email.toUpperCase(), "member");
    expectError(await api.request.get("/invite").query({ token: first.token }), 410, "invite_expired");
    expectError(await accept(first.token), 410, "invite_expired");
    const res = await accept(second.token);
    expect(res.status).toBe(200);
    expect(res.body.user.role).toBe("member");
  });

  it("does not let a re-invite in one organization touch a pending invite of the same email elsewhere", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const other = await createOrg(api.database.db, api.deps.config);
    const email = uniqueEmail("two-orgs");
    const theirs = await invite(other, email);
    await invite(owner, email);
    await invite(owner, email);
    expect((await api.request.get("/invite").query({ token: theirs.token })).status).toBe(200);
  });

  it("requires an existing account's current password (401 otherwise) and never changes it", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const existing = await createOrg(api.database.db, api.deps.config);
    const hashBefore = (await api.database.db.prisma.user.findUniqueOrThrow({ where: { id: existing.userId } })).passwordHash;
    const created = await invite(owner, existing.email);
    const wrong = await accept(created.token, "an attacker's chosen password");
    expectError(wrong, 401, "unauthorized");
    // The failed attempt did not spend the invite.
    expect((await api.request.get("/invite").query({ token: created.token })).status).toBe(200);
    const right = await accept(created.token, TEST_PASSWORD);
    expect(right.status).toBe(200);
    expect(right.body.user).toEqual({ id: existing.userId, email: existing.email, role: "member" });
    expect((await api.database.db.prisma.user.findUniqueOrThrow({ where: { id: existing.userId } })).passwordHash).toBe(hashBefore);
    // The account keeps its first organization.
    const me = await api.request.get("/me").set("Authorization", `Bearer ${existing.token}`);
    expect(me.body.org.id).toBe(existing.orgId);
  });

  it("refuses a new account's password outside 15 characters..72 bytes with 400, leaving the invite usable", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner);
    expectError(await accept(created.token, "too short pw"), 400, "validation_failed");
    expectError(await accept(created.token, "w".repeat(73)), 400, "validation_failed");
    expect((await accept(created.token)).status).toBe(200);
  });

  it("refuses unknown fields (role, org_id, email) with 400 and applies none of them", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const other = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner);
    for (const extra of [{ role: "owner" }, { org_id: other.orgId }, { email: uniqueEmail() }]) {
      const res = await api.request.post("/invite/accept").send({ token: created.token, password: NEW_PASSWORD, ...extra });
      expectError(res, 400, "validation_failed");
    }
    const res = await accept(created.token);
    expect(res.body.user.role).toBe("member");
    expect(await api.database.db.prisma.membership.count({ where: { orgId: other.orgId } })).toBe(1);
  });

  it("answers 404 invite_not_found for an unknown token", async () => {
    expectError(await accept("B".repeat(43)), 404, "invite_not_found");
    expectError(await accept("x"), 404, "invite_not_found");
  });

  it("answers 409 already_member when the account joined the organization since the invite was sent", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const existing = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner, existing.email);
    await addMember(api.database.db, api.deps.config, owner.orgId, "member", existing.userId);
    expectError(await accept(created.token, TEST_PASSWORD), 409, "already_member");
  });
});

describe("invite secrets (docs/reference/robustness.md#r12, docs/reference/robustness.md#r19, docs/reference/robustness.md#r20, docs/reference/robustness.md#r22)", () => {
  it("stores only the SHA-256 of a 32-byte token", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner);
    expect(Buffer.from(created.token, "base64url")).toHaveLength(32);
    const stored = await api.database.db.prisma.invite.findFirstOrThrow({ where: { email: created.email } });
    expect(Buffer.from(stored.tokenHash).equals(createHash("sha256").update(created.token).digest())).toBe(true);
    const { rows } = await api.database.db.pool.query("SELECT row_to_json(i)::text AS row FROM invites i WHERE email = $1", [created.email]);
    expect(rows[0].row).not.toContain(created.token);
  });

  it("never returns the token after creation, and never logs tokens or passwords", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const created = await invite(owner);
    const check = await api.request.get("/invite").query({ token: created.token });
    const accepted = await accept(created.token);
    for (const res of [check, accepted]) {
      expect(res.text).not.toContain(created.token);
      expect(res.text).not.toMatch(/hash/i);
    }
    const logs = api.logs();
    expect(logs).toContain("GET /invite 200");
    expect(logs).toContain("POST /invite/accept 200");
    for (const secret of [...inviteTokens, ...issuedJwts, NEW_PASSWORD, TEST_PASSWORD]) expect(logs).not.toContain(secret);
  });
});
