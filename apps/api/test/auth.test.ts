// Accounts and tokens (docs/reference/tenants.md#authentication, docs/reference/tenants.md#team-api-for-the-console, docs/reference/robustness.md#b): signup, login, /me, password changes, and every way a JWT must be
// refused (credential versions included).
import jwt from "jsonwebtoken";
import { newId } from "@conveyor/db";
import { signToken } from "../src/services/infrastructure/tokens";
import { expectError } from "./support/expect-error";
import { addMember, createApiKey, createOrg, uniqueEmail, TEST_PASSWORD, startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
});
afterAll(() => api.close());

const PASSWORD = "a perfectly long passphrase";
const secrets: string[] = [PASSWORD];

async function signup(email = uniqueEmail("signup"), orgName = "Acme") {
  const res = await api.request.post("/auth/signup").send({ email, password: PASSWORD, org_name: orgName });
  if (res.status === 201) secrets.push(res.body.token);
  return res;
}

describe("POST /auth/signup", () => {
  it("creates the user, the organization and the owner membership, and returns a working token", async () => {
    const email = uniqueEmail("founder");
    const res = await signup(email, "Founders Inc");
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      token: expect.any(String),
      user: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), email, role: "owner" },
      org: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "Founders Inc" },
    });
    const me = await api.request.get("/me").set("Authorization", `Bearer ${res.body.token}`);
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: { id: res.body.user.id, email }, org: res.body.org, role: "owner" });
    const stored = await api.database.db.prisma.user.findUniqueOrThrow({ where: { id: res.body.user.id } });
    expect(stored.passwordHash).toMatch(/^\$2[ab]\$04\$/);
    expect(stored.passwordHash).not.toContain(PASSWORD);
  });

  it("trims and lower-cases the email", async () => {
    const email = uniqueEmail("Mixed");
    const res = await api.request.post("/auth/signup").send({ email: `  ${email.toUpperCase()} `, password: PASSWORD, org_name: "Case" });
    expect(res.status).toBe(201);
    expect(res.body.user.email).toBe(email.toLowerCase());
    const login = await api.request.post("/auth/login").send({ email: email.toUpperCase(), password: PASSWORD });
    expect(login.status).toBe(200);
  });

  it("refuses an email that already has an account with 409 email_taken, whatever its case", async () => {
    const email = uniqueEmail("taken");
    expect((await signup(email)).status).toBe(201);
    expectError(await signup(` ${email.toUpperCase()}`), 409, "email_taken");
    expect(await api.database.db.prisma.user.count({ where: { email } })).toBe(1);
  });

  it("refuses passwords shorter than 15 characters and longer than 72 bytes, without truncating", async () => {
    const cases = ["fourteen chars", "é".repeat(37), "x".repeat(73)];
    for (const password of cases) {
      const res = await api.request.post("/auth/signup").send({ email: uniqueEmail(), password, org_name: "Short" });
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details).toEqual([{ path: "password", message: expect.any(String) }]);
    }
    // Exactly 15 characters (counted as people count them) and exactly 72 bytes are fine.
    for (const password of ["fifteen chars!!", "😀".repeat(15), "y".repeat(72), "é".repeat(36)]) {
      const res = await api.request.post("/auth/signup").send({ email: uniqueEmail(), password, org_name: "Edge" });
      expect(res.status).toBe(201);
    }
  });

  it("refuses unknown fields such as role or org_id (mass assignment) with 400 validation_failed", async () => {
    for (const extra of [{ role: "admin" }, { org_id: newId() }, { password_hash: "x" }]) {
      const email = uniqueEmail();
      const res = await api.request.post("/auth/signup").send({ email, password: PASSWORD, org_name: "Mass", ...extra });
      expectError(res, 400, "validation_failed");
      expect(await api.database.db.prisma.user.count({ where: { email } })).toBe(0);
    }
  });

  it("refuses a missing or malformed email, password or org name naming each path", async () => {
    const res = await api.request.post("/auth/signup").send({ email: "not-an-email", org_name: "" });
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(["email", "org_name", "password"]);
  });
});

describe("POST /auth/signup with ALLOW_SIGNUP=false", () => {
  let closed: TestApi;
  beforeAll(async () => {
    closed = await startTestApi({ ALLOW_SIGNUP: "false", AUTH_RATE_LIMIT_PER_MIN: "0" });
  });
  afterAll(() => closed.close());

  it("answers 404 not_found exactly like an unknown route and creates nothing", async () => {
    const res = await closed.request.post("/auth/signup").send({ email: uniqueEmail(), password: PASSWORD, org_name: "Nope" });
    expectError(res, 404, "not_found");
    const unknown = await closed.request.post("/auth/signup-nope").send({});
    expect(res.body.error.message.replace("/auth/signup", "X")).toBe(unknown.body.error.message.replace("/auth/signup-nope", "X"));
    expect(await closed.database.db.prisma.user.count()).toBe(0);
  });

  it("still lets existing users log in", async () => {
    const owner = await createOrg(closed.database.db, closed.deps.config);
    const res = await closed.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD });
    expect(res.status).toBe(200);
  });
});

describe("POST /auth/login", () => {
  it("returns a token scoped to the oldest membership, the role there, and every org of the user", async () => {
    const first = await createOrg(api.database.db, api.deps.config, "First Org");
    const second = await createOrg(api.database.db, api.deps.config, "Second Org");
    await addMember(api.database.db, api.deps.config, second.orgId, "admin", first.userId);
    const res = await api.request.post("/auth/login").send({ email: first.email, password: TEST_PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      token: expect.any(String),
      user: { id: first.userId, email: first.email, role: "owner" },
      orgs: [
        { id: first.orgId, name: "First Org", role: "owner" },
        { id: second.orgId, name: "Second Org", role: "admin" },
      ],
    });
    const me = await api.request.get("/me").set("Authorization", `Bearer ${res.body.token}`);
    expect(me.body.org.id).toBe(first.orgId);
  });

  it("scopes the token to org_id when given", async () => {
    const first = await createOrg(api.database.db, api.deps.config);
    const second = await createOrg(api.database.db, api.deps.config, "Scoped");
    await addMember(api.database.db, api.deps.config, second.orgId, "member", first.userId);
    const res = await api.request.post("/auth/login").send({ email: first.email, password: TEST_PASSWORD, org_id: second.orgId });
    expect(res.status).toBe(200);
    expect(res.body.user.role).toBe("member");
    const me = await api.request.get("/me").set("Authorization", `Bearer ${res.body.token}`);
    expect(me.body).toEqual({ user: { id: first.userId, email: first.email }, org: { id: second.orgId, name: "Scoped" }, role: "member" });
  });

  it("answers 404 for an org_id the user does not belong to, identical for another org and a random id", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    const other = await createOrg(api.database.db, api.deps.config);
    const foreign = await api.request.post("/auth/login").send({ email: user.email, password: TEST_PASSWORD, org_id: other.orgId });
    const random = await api.request.post("/auth/login").send({ email: user.email, password: TEST_PASSWORD, org_id: newId() });
    expectError(foreign, 404, "not_found");
    expect(foreign.body).toEqual(random.body);
  });

  it("gives byte-identical 401 bodies for an unknown email and a wrong password", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    const unknown = await api.request.post("/auth/login").send({ email: uniqueEmail("ghost"), password: TEST_PASSWORD });
    const wrong = await api.request.post("/auth/login").send({ email: user.email, password: "not the right password at all" });
    expectError(unknown, 401, "unauthorized");
    expectError(wrong, 401, "unauthorized");
    expect(unknown.text).toBe(wrong.text);
    expect(unknown.headers["www-authenticate"]).toBe(wrong.headers["www-authenticate"]);
    expect(unknown.headers["content-length"]).toBe(wrong.headers["content-length"]);
  });

  it("refuses a password over 72 bytes with 400 instead of comparing a truncated one", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    // bcrypt would accept this for a 72-byte password; we never let it compare.
    const res = await api.request.post("/auth/login").send({ email: user.email, password: `${"z".repeat(72)}tail` });
    expectError(res, 400, "validation_failed");
  });

  it("refuses unknown fields with 400 validation_failed", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    const res = await api.request.post("/auth/login").send({ email: user.email, password: TEST_PASSWORD, role: "owner" });
    expectError(res, 400, "validation_failed");
  });

  it("answers 403 for a correct password of an account that belongs to no organization", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    await api.database.db.prisma.membership.deleteMany({ where: { userId: user.userId } });
    const res = await api.request.post("/auth/login").send({ email: user.email, password: TEST_PASSWORD });
    expectError(res, 403, "forbidden");
  });
});

describe("GET /me and JWT verification (docs/reference/robustness.md#r10, docs/reference/robustness.md#r11)", () => {
  const secret = () => api.deps.config.JWT_SECRET;
  const now = () => Math.floor(Date.now() / 1000);

  it("refuses a request without a credential with 401 and WWW-Authenticate", async () => {
    expectError(await api.request.get("/me"), 401, "unauthorized");
    expectError(await api.request.get("/me").set("Authorization", "Basic abc"), 401, "unauthorized");
    expectError(await api.request.get("/me").set("Authorization", "Bearer not.a.jwt"), 401, "unauthorized");
  });

  it("refuses alg none", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const token = `${encode({ alg: "none", typ: "JWT" })}.${encode({ sub: owner.userId, org: owner.orgId, iat: now(), exp: now() + 3600 })}.`;
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${token}`), 401, "unauthorized");
  });

  it("refuses a token signed with another secret, and one signed with HS512 even with our secret", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const claims = { sub: owner.userId, org: owner.orgId };
    const otherSecret = jwt.sign(claims, "another-secret-that-is-long-enough-0000000", { algorithm: "HS256", expiresIn: "1h" });
    const otherAlg = jwt.sign(claims, secret(), { algorithm: "HS512", expiresIn: "1h" });
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${otherSecret}`), 401, "unauthorized");
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${otherAlg}`), 401, "unauthorized");
  });

  it("refuses an expired token and a token without exp", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const expired = jwt.sign({ sub: owner.userId, org: owner.orgId, iat: now() - 7200, exp: now() - 3600 }, secret(), { algorithm: "HS256" });
    const noExp = jwt.sign({ sub: owner.userId, org: owner.orgId }, secret(), { algorithm: "HS256" });
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${expired}`), 401, "unauthorized");
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${noExp}`), 401, "unauthorized");
  });

  it("expires a token after JWT_TTL (12 h by default) on the API's clock", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const token = signToken({ userId: owner.userId, orgId: owner.orgId }, api.deps.config, api.clock.now());
    expect((await api.request.get("/me").set("Authorization", `Bearer ${token}`)).status).toBe(200);
    const decoded = jwt.decode(token) as { exp: number; iat: number };
    expect(decoded.exp - decoded.iat).toBe(12 * 3600);
    api.clock.advance(12 * 3600 * 1000 + 1000);
    try {
      expectError(await api.request.get("/me").set("Authorization", `Bearer ${token}`), 401, "unauthorized");
    } finally {
      api.clock.advance(-(12 * 3600 * 1000 + 1000));
    }
  });

  it("refuses a removed member's unexpired token on the very next request", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    expect((await api.request.get("/me").set("Authorization", `Bearer ${member.token}`)).status).toBe(200);
    await api.database.db.prisma.membership.delete({ where: { orgId_userId: { orgId: owner.orgId, userId: member.userId } } });
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${member.token}`), 401, "unauthorized");
  });

  it("applies a role change on the next request", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    await api.database.db.prisma.membership.update({ where: { orgId_userId: { orgId: owner.orgId, userId: member.userId } }, data: { role: "admin" } });
    const me = await api.request.get("/me").set("Authorization", `Bearer ${member.token}`);
    expect(me.body.role).toBe("admin");
  });
});

describe("credential versions: tokens carry `ver` (docs/reference/tenants.md#team-api-for-the-console)", () => {
  const secret = () => api.deps.config.JWT_SECRET;
  const now = () => Math.floor(Date.now() / 1000);

  it("signs the user's credential version into login tokens, and accepts a token without one as version 0", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const login = await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD });
    expect((jwt.decode(login.body.token) as { ver: number }).ver).toBe(0);
    const noVer = jwt.sign({ sub: owner.userId, org: owner.orgId, iat: now(), exp: now() + 3600 }, secret(), { algorithm: "HS256" });
    expect((await api.request.get("/me").set("Authorization", `Bearer ${noVer}`)).status).toBe(200);
    await api.database.db.prisma.user.update({ where: { id: owner.userId }, data: { credentialVersion: 3 } });
    expectError(await api.request.get("/me").set("Authorization", `Bearer ${noVer}`), 401, "unauthorized");
    const relogin = await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD });
    expect((jwt.decode(relogin.body.token) as { ver: number }).ver).toBe(3);
    expect((await api.request.get("/me").set("Authorization", `Bearer ${relogin.body.token}`)).status).toBe(200);
  });

  it("refuses a token whose ver is not a non-negative integer, or names another version", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    for (const ver of [1, -1, 0.5, "0", null]) {
      const token = jwt.sign({ sub: owner.userId, org: owner.orgId, ver, iat: now(), exp: now() + 3600 }, secret(), { algorithm: "HS256" });
      expectError(await api.request.get("/me").set("Authorization", `Bearer ${token}`), 401, "unauthorized");
    }
  });
});

describe("POST /auth/password", () => {
  const NEW = "a brand new and long passphrase";
  const change = (token: string, body: object) => api.request.post("/auth/password").set("Authorization", `Bearer ${token}`).send(body);

  it("changes the password: 204; every token issued before stops working, the one that asked included", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const other = await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD });
    const res = await change(owner.token, { current_password: TEST_PASSWORD, new_password: NEW });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    for (const token of [owner.token, other.body.token]) expectError(await api.request.get("/me").set("Authorization", `Bearer ${token}`), 401, "unauthorized");
    expectError(await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD }), 401, "unauthorized");
    const login = await api.request.post("/auth/login").send({ email: owner.email, password: NEW });
    expect((await api.request.get("/me").set("Authorization", `Bearer ${login.body.token}`)).status).toBe(200);
    const stored = await api.database.db.prisma.user.findUniqueOrThrow({ where: { id: owner.userId } });
    expect(stored.credentialVersion).toBe(1);
    expect(stored.passwordHash).not.toContain(NEW);
  });

  it("answers 401 for a wrong current password, changes nothing, and counts it as a failed login for the account", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    for (let i = 0; i < 10; i++)
      expectError(await change(owner.token, { current_password: "this is not my password", new_password: NEW }), 401, "unauthorized");
    // The account's budget is spent: the right password is refused too, here and at login.
    expectError(await change(owner.token, { current_password: TEST_PASSWORD, new_password: NEW }), 429, "rate_limited");
    expectError(await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD }), 429, "rate_limited");
    expect((await api.request.get("/me").set("Authorization", `Bearer ${owner.token}`)).status).toBe(200);
    expect((await api.database.db.prisma.user.findUniqueOrThrow({ where: { id: owner.userId } })).credentialVersion).toBe(0);
  });

  it("applies the signup rules to the new password (15 characters to 72 bytes) and refuses unknown fields", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    for (const body of [
      { current_password: TEST_PASSWORD, new_password: "fourteen chars" },
      { current_password: TEST_PASSWORD, new_password: "x".repeat(73) },
      { current_password: TEST_PASSWORD },
      { current_password: TEST_PASSWORD, new_password: NEW, user_id: owner.userId },
    ]) {
      expectError(await change(owner.token, body), 400, "validation_failed");
    }
    expect((await api.request.get("/me").set("Authorization", `Bearer ${owner.token}`)).status).toBe(200);
  });

  it("refuses API keys with 403 and no credential with 401", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const { key } = await createApiKey(api.database.db, owner);
    expectError(await api.request.post("/auth/password").set("X-API-Key", key).send({ current_password: TEST_PASSWORD, new_password: NEW }), 403, "forbidden");
    expectError(await api.request.post("/auth/password").send({ current_password: TEST_PASSWORD, new_password: NEW }), 401, "unauthorized");
  });
});

describe("secrets", () => {
  it("never puts a password, a token or a hash in a response body or a log line", async () => {
    const email = uniqueEmail("leak");
    const res = await signup(email);
    const login = await api.request.post("/auth/login").send({ email, password: PASSWORD });
    secrets.push(login.body.token);
    const me = await api.request.get("/me").set("Authorization", `Bearer ${login.body.token}`);
    const hash = (await api.database.db.prisma.user.findUniqueOrThrow({ where: { email } })).passwordHash;
    for (const body of [res.text, login.text, me.text]) {
      expect(body).not.toContain(PASSWORD);
      expect(body).not.toContain(hash);
      expect(body).not.toMatch(/password|hash/i);
    }
    const logs = api.logs();
    expect(logs).toContain("POST /auth/login 200");
    for (const secret of [...secrets, hash, api.deps.config.JWT_SECRET]) expect(logs).not.toContain(secret);
  });
});
