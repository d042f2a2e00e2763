// Single sign-on (docs/reference/tenants.md#audit-log, docs/reference/robustness.md#r45) over HTTP against OpenID providers started here: the settings (checked
// at save, owners only, the secret write-only and sealed), a sign-in that makes the member with the default role and
// a second one that reuses it, `enforce`, and every forged or replayed sign-in refused. The provider here is the
// forging one (a real wire format, with the ID token each forgery needs); the whole flow through the real
// `oidc-provider` in Chromium is apps/console/test/sso.test.ts.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { addMember, createApiKey, createOrg, TEST_PASSWORD, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { startForgingProvider, type ForgingProvider } from "@conveyor/testkit/oidc";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let provider: ForgingProvider;
let otherProvider: ForgingProvider;
let acme: TestMember;
let globex: TestMember;
const CLIENT = { clientId: "conveyor-test", clientSecret: "provider-client-secret-f00d" };
const OTHER_CLIENT = { clientId: "conveyor-globex", clientSecret: "globex-client-secret-beef" };

beforeAll(async () => {
  // The providers listen on 127.0.0.1 over http: both settings are for development and tests only.
  api = await startTestApi({ SSO_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true", AUTH_RATE_LIMIT_PER_MIN: "0" });
  provider = await startForgingProvider(CLIENT);
  otherProvider = await startForgingProvider(OTHER_CLIENT);
  acme = await createOrg(api.database.db, api.deps.config, "Acme");
  globex = await createOrg(api.database.db, api.deps.config, "Globex");
  await putSso(acme, { issuer: provider.issuer, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, email_domains: ["acme.test"] }, 200);
  await putSso(
    globex,
    { issuer: otherProvider.issuer, client_id: OTHER_CLIENT.clientId, client_secret: OTHER_CLIENT.clientSecret, email_domains: ["globex.test"] },
    200,
  );
}, 60_000);
afterEach(() => {
  provider.forge(undefined);
  otherProvider.forge(undefined);
});
afterAll(async () => {
  await provider?.close();
  await otherProvider?.close();
  await api?.close();
});

const bearer = (m: TestMember) => ["Authorization", `Bearer ${m.token}`] as const;

async function putSso(owner: TestMember, body: Record<string, unknown>, status: number) {
  const res = await api.request
    .put("/org/sso")
    .set(...bearer(owner))
    .send(body);
  if (res.status !== status) throw new Error(`PUT /org/sso: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

const cookieOf = (setCookie: string[] | string | undefined, name: string) =>
  ([] as string[])
    .concat(setCookie ?? [])
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1);

type Attempt = { callback: URL; sso: string };

/** GET /auth/sso/start and the provider's authorization endpoint: the callback URL it sends the browser to. */
async function startAt(query: Record<string, string>): Promise<Attempt> {
  const start = await api.request.get("/auth/sso/start").query(query).set("Accept", "application/json");
  expect(start.status).toBe(302);
  const sso = cookieOf(start.headers["set-cookie"], "conveyor_sso");
  expect(sso).toBeDefined();
  const authorize = await fetch(start.headers.location!, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  return { callback: new URL(authorize.headers.get("location")!), sso: sso! };
}

/** The callback as the browser would call it (the cookie of its start), as JSON or as a browser navigation. */
function callback(attempt: Attempt, options: { html?: boolean; url?: URL } = {}) {
  const url = options.url ?? attempt.callback;
  return api.request
    .get(url.pathname + url.search)
    .set("Cookie", attempt.sso)
    .set("Accept", options.html ? "text/html,application/xhtml+xml" : "application/json");
}

/** A whole sign-in as `email`; the callback's answer. */
async function signIn(email: string, query: Record<string, string> = { email }) {
  provider.signInAs(email);
  return callback(await startAt(query));
}

async function sessionOf(res: { headers: Record<string, unknown> }) {
  const cookie = cookieOf(res.headers["set-cookie"] as string[], "conveyor_session");
  expect(cookie).toBeDefined();
  const session = await api.request.get("/auth/session").set("Cookie", cookie!);
  expect(session.status).toBe(200);
  return {
    cookie: cookie!,
    body: session.body as { user: { id: string; email: string }; org: { id: string }; role: string; orgs: unknown[]; csrf_token: string },
  };
}

const auditOf = async (orgId: string, action: string) =>
  (
    await api.database.db.pool.query<{ actor_label: string | null; details: Record<string, unknown> | null; changes: unknown }>(
      "SELECT actor_label, details, changes FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY time, id",
      [orgId, action],
    )
  ).rows;

describe("the settings", () => {
  it("answers the owner without the client secret, which is stored sealed, and names the redirect URI to register", async () => {
    const res = await api.request.get("/org/sso").set(...bearer(acme));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      issuer: provider.issuer,
      client_id: CLIENT.clientId,
      client_secret_set: true,
      email_domains: ["acme.test"],
      default_role: "member",
      enforce: false,
      redirect_uri: `${api.deps.config.PUBLIC_URL}/auth/sso/callback`,
      updated_at: expect.any(String),
    });
    expect(responseSchemas.SsoSettings.validate(res.body).error).toBeUndefined();
    expect(res.text).not.toContain(CLIENT.clientSecret);
    const { rows } = await api.database.db.pool.query<{ row: string }>("SELECT row_to_json(s)::text AS row FROM org_sso s WHERE org_id = $1", [acme.orgId]);
    expect(rows[0]!.row).not.toContain(CLIENT.clientSecret);
    expect(rows[0]!.row).not.toContain(Buffer.from(CLIENT.clientSecret).toString("hex"));
  });

  it("refuses members, admins, API keys and another organization", async () => {
    const admin = await addMember(api.database.db, api.deps.config, acme.orgId, "admin");
    const member = await addMember(api.database.db, api.deps.config, acme.orgId, "member");
    const { key } = await createApiKey(api.database.db, acme);
    for (const who of [admin, member]) {
      expectError(await api.request.get("/org/sso").set(...bearer(who)), 403, "forbidden");
      expectError(
        await api.request
          .put("/org/sso")
          .set(...bearer(who))
          .send({ issuer: provider.issuer, client_id: "x", email_domains: ["acme.test"] }),
        403,
        "forbidden",
      );
      expectError(await api.request.delete("/org/sso").set(...bearer(who)), 403, "forbidden");
    }
    expectError(await api.request.get("/org/sso").set("X-API-Key", key), 403, "forbidden");
    // Globex's owner reads Globex's settings, never Acme's.
    const theirs = await api.request.get("/org/sso").set(...bearer(globex));
    expect(theirs.body.issuer).toBe(otherProvider.issuer);
    const lonely = await createOrg(api.database.db, api.deps.config);
    expectError(await api.request.get("/org/sso").set(...bearer(lonely)), 404, "not_found");
  });

  it("checks the provider when saved, and answers 400 naming what failed", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const base = { client_id: "c", client_secret: "s", email_domains: ["owner-check.test"] };
    // Nothing listens there.
    const closed = await new Promise<number>((resolve) => {
      const s: Server = createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    let res = await api.request
      .put("/org/sso")
      .set(...bearer(owner))
      .send({ ...base, issuer: `http://127.0.0.1:${closed}` });
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details[0]).toMatchObject({ path: "issuer", message: expect.stringContaining("discovery failed") });

    // A discovery document whose JWKS answers 404.
    const broken = createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
      if (req.url === "/.well-known/openid-configuration") {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/a`,
            token_endpoint: `${issuer}/t`,
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ["code"],
          }),
        );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => broken.listen(0, "127.0.0.1", resolve));
    try {
      res = await api.request
        .put("/org/sso")
        .set(...bearer(owner))
        .send({ ...base, issuer: `http://127.0.0.1:${(broken.address() as AddressInfo).port}` });
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details[0].message).toMatch(/^JWKS failed: .*404/);
    } finally {
      broken.close();
    }
    // The first save needs the secret.
    res = await api.request
      .put("/org/sso")
      .set(...bearer(owner))
      .send({ issuer: provider.issuer, client_id: "c", email_domains: ["owner-check.test"] });
    expect(res.body.error.details).toEqual([{ path: "client_secret", message: "is required the first time single sign-on is set up" }]);
    // Nothing was stored by any of these.
    expectError(await api.request.get("/org/sso").set(...bearer(owner)), 404, "not_found");
  });

  it("refuses an http or private issuer unless the deployment allows it (SSO_ALLOW_HTTP, the SSRF guard)", async () => {
    const strict = await startTestApi({});
    try {
      const owner = await createOrg(strict.database.db, strict.deps.config);
      const body = { client_id: "c", client_secret: "s", email_domains: ["strict.test"] };
      let res = await strict.request
        .put("/org/sso")
        .set(...bearer(owner))
        .send({ ...body, issuer: provider.issuer });
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details[0]).toEqual({ path: "issuer", message: "must use https, not http (http is for development: SSO_ALLOW_HTTP)" });
      for (const issuer of ["https://127.0.0.1:8443", "https://169.254.169.254", "https://[::1]/", "https://localhost/", "https://10.0.0.7/realms/x"]) {
        res = await strict.request
          .put("/org/sso")
          .set(...bearer(owner))
          .send({ ...body, issuer });
        expectError(res, 400, "validation_failed");
        expect(res.body.error.details[0].message).toMatch(/non-public address|internal host name/);
      }
    } finally {
      await strict.close();
    }
  });

  it("gives each e-mail domain to one organization (409), and records every change but the secret in the audit log", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const taken = await api.request
      .put("/org/sso")
      .set(...bearer(owner))
      .send({ issuer: provider.issuer, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, email_domains: ["acme.test", "new.test"] });
    expectError(taken, 409, "sso_domain_taken");
    await putSso(owner, { issuer: provider.issuer, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, email_domains: ["audited.test"] }, 200);
    await putSso(owner, { issuer: provider.issuer, client_id: CLIENT.clientId, email_domains: ["audited.test", "b.test"], default_role: "admin" }, 200);
    const entries = await auditOf(owner.orgId, "sso.update");
    expect(entries.map((e) => e.changes)).toEqual([
      {
        issuer: { before: null, after: provider.issuer },
        client_id: { before: null, after: CLIENT.clientId },
        email_domains: { before: null, after: ["audited.test"] },
        default_role: { before: null, after: "member" },
        enforce: { before: null, after: false },
      },
      { email_domains: { before: ["audited.test"], after: ["audited.test", "b.test"] }, default_role: { before: "member", after: "admin" } },
    ]);
    expect(entries.map((e) => e.details)).toEqual([{ client_secret_changed: true }, null]);
    expect(JSON.stringify(entries)).not.toContain(CLIENT.clientSecret);
    // Deleting frees the domains for another organization.
    expect((await api.request.delete("/org/sso").set(...bearer(owner))).status).toBe(204);
    expect((await auditOf(owner.orgId, "sso.delete")).length).toBe(1);
    expect((await api.request.get("/auth/sso/start").query({ email: "x@audited.test" }).set("Accept", "application/json")).body.error.code).toBe(
      "sso_not_configured",
    );
  });
});

describe("a sign-in", () => {
  it("makes a new member with the default role, lands in the console, and a second sign-in reuses the membership", async () => {
    const email = `newcomer-${Date.now()}@acme.test`;
    const first = await signIn(email, { email, return_to: "/jobs?status=failed" });
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe(`${api.deps.config.PUBLIC_URL}/jobs?status=failed`);
    const { body, cookie } = await sessionOf(first);
    expect(body).toMatchObject({ user: { email }, org: { id: acme.orgId }, role: "member" });
    const members = await api.request.get("/org/members").set(...bearer(acme));
    expect(members.body).toContainEqual({ id: body.user.id, email, role: "member", joined_at: expect.any(String) });

    const second = await signIn(email.toUpperCase(), { email });
    const again = await sessionOf(second);
    expect(again.body.user.id).toBe(body.user.id);
    const { rows } = await api.database.db.pool.query("SELECT 1 FROM memberships WHERE user_id = $1", [body.user.id]);
    expect(rows.length).toBe(1);

    const entries = (await auditOf(acme.orgId, "sso.login")).filter((e) => e.actor_label === email);
    expect(entries.map((e) => [e.details, e.changes])).toEqual([
      [{ method: "sso", credential: "session", joined: true, account_created: true }, { role: { before: null, after: "member" } }],
      [{ method: "sso", credential: "session" }, null],
    ]);
    // The session stays in the organization whose provider vouched for it.
    expectError(
      await api.request.post("/auth/session/org").set("Cookie", cookie).set("X-CSRF-Token", body.csrf_token).send({ org_id: globex.orgId }),
      403,
      "forbidden",
    );
    // Its account has no password anyone knows.
    expectError(await api.request.post("/auth/login").send({ email, password: TEST_PASSWORD }), 401, "unauthorized");
  });

  it("keeps an existing member's role, and reads the e-mail from userinfo when the ID token has none", async () => {
    const admin = await addMember(api.database.db, api.deps.config, acme.orgId, "admin");
    // A member whose address is at the provider's domain: re-create with an acme.test e-mail.
    const email = `admin-${Date.now()}@acme.test`;
    await api.database.db.pool.query("UPDATE users SET email = $1 WHERE id = $2", [email, admin.userId]);
    provider.forge({ claims: { email: undefined, email_verified: undefined }, userinfo: { sub: `sub-${email}`, email, email_verified: true } });
    const res = await signIn(email);
    const { body } = await sessionOf(res);
    expect(body).toMatchObject({ user: { id: admin.userId }, role: "admin" });
  });

  it("starts by organization id too, and lands on /overview by default", async () => {
    provider.signInAs(`by-org-${Date.now()}@acme.test`);
    const res = await callback(await startAt({ org: acme.orgId }));
    expect(res.headers.location).toBe(`${api.deps.config.PUBLIC_URL}/overview`);
  });
});

describe("forged and replayed sign-ins (docs/reference/robustness.md#r45)", () => {
  /** Refused: no session cookie, a browser sent to /login?sso_error=<reason>, recorded as a failed login when an org is known. */
  async function expectRefused(res: Awaited<ReturnType<typeof callback>>, reason: string) {
    expect({ status: res.status, location: res.headers.location }).toEqual({ status: 302, location: `/login?sso_error=${reason}` });
    expect(cookieOf(res.headers["set-cookie"], "conveyor_session")).toBeUndefined();
  }

  const email = () => `h45-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@acme.test`;

  it("refuses a wrong state, and answers a non-browser client with 401 sso_failed", async () => {
    provider.signInAs(email());
    const attempt = await startAt({ email: "someone@acme.test" });
    const forged = new URL(attempt.callback);
    forged.searchParams.set("state", "not-the-state-we-sent");
    const res = await callback(attempt, { url: forged });
    expectError(res, 401, "sso_failed");
    expect(cookieOf(res.headers["set-cookie"], "conveyor_session")).toBeUndefined();
  });

  it("refuses a replayed callback and a replayed code", async () => {
    provider.signInAs(email());
    const attempt = await startAt({ email: "someone@acme.test" });
    expect((await callback(attempt, { html: true })).status).toBe(302);
    // The same callback again: this browser's sign-in was used.
    await expectRefused(await callback(attempt, { html: true }), "no_sign_in");
    // The same code with a fresh start: the provider refuses a code used once.
    const fresh = await startAt({ email: "someone@acme.test" });
    const replayed = new URL(fresh.callback);
    replayed.searchParams.set("code", attempt.callback.searchParams.get("code")!);
    await expectRefused(await callback(fresh, { url: replayed, html: true }), "token_rejected");
    // A callback without the cookie of its start (another browser).
    const stolen = await startAt({ email: "someone@acme.test" });
    expect((await api.request.get(stolen.callback.pathname + stolen.callback.search).set("Accept", "text/html")).headers.location).toBe(
      "/login?sso_error=no_sign_in",
    );
  });

  it.each([
    ["a wrong nonce", { claims: { nonce: "another-nonce" } }],
    ["a wrong audience", { claims: { aud: "another-client" } }],
    ["a wrong issuer", { claims: { iss: "http://127.0.0.1:1/evil" } }],
    ["an expired ID token", { claims: { iat: Math.floor(Date.now() / 1000) - 3600, exp: Math.floor(Date.now() / 1000) - 600 } }],
    ["an unsigned ID token (alg none)", { signWith: "none" as const }],
    ["an ID token signed by another key", { signWith: "other" as const }],
  ])("refuses %s", async (_what, forgery) => {
    const who = email();
    provider.signInAs(who);
    provider.forge(forgery);
    await expectRefused(await callback(await startAt({ email: who }), { html: true }), "token_rejected");
    expect((await api.database.db.pool.query("SELECT 1 FROM users WHERE email = $1", [who])).rowCount).toBe(0);
  });

  it("refuses an unverified e-mail and a domain the organization does not sign in, and records both", async () => {
    const unverified = email();
    provider.signInAs(unverified);
    provider.forge({ claims: { email_verified: false } });
    await expectRefused(await callback(await startAt({ email: unverified }), { html: true }), "email_unverified");
    provider.forge(undefined);
    const elsewhere = `someone-${Date.now()}@globex.test`;
    provider.signInAs(elsewhere);
    await expectRefused(await callback(await startAt({ org: acme.orgId }), { html: true }), "domain_not_allowed");
    const failures = await auditOf(acme.orgId, "session.login_failed");
    expect(failures.filter((f) => f.actor_label === unverified || f.actor_label === elsewhere).map((f) => f.details)).toEqual([
      { method: "sso", reason: "email_unverified" },
      { method: "sso", reason: "domain_not_allowed" },
    ]);
    for (const who of [unverified, elsewhere]) expect((await api.database.db.pool.query("SELECT 1 FROM users WHERE email = $1", [who])).rowCount).toBe(0);
  });

  it("refuses a code from another organization's provider", async () => {
    otherProvider.signInAs(`spy-${Date.now()}@globex.test`);
    const theirs = await startAtOther();
    provider.signInAs(email());
    const ours = await startAt({ org: acme.orgId });
    const swapped = new URL(ours.callback);
    swapped.searchParams.set("code", theirs.callback.searchParams.get("code")!);
    await expectRefused(await callback(ours, { url: swapped, html: true }), "token_rejected");
    // The code was never sent to Globex's provider, and Acme's never issued it.
    expect(otherProvider.codes.at(-1)!.redeemed).toBe(0);
  });

  it("refuses to start a sign-in that would land outside the console", async () => {
    for (const target of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "http:/evil.example"]) {
      const res = await api.request.get("/auth/sso/start").query({ email: "x@acme.test", return_to: target }).set("Accept", "application/json");
      expectError(res, 400, "validation_failed");
      expect(res.headers["set-cookie"]).toBeUndefined();
    }
  });

  async function startAtOther(): Promise<Attempt> {
    return startAt({ org: globex.orgId });
  }
});

describe("enforce", () => {
  it("refuses password logins, password sessions, tokens and new API keys to members, and keeps the owner's password", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    const memberSession = await api.request.post("/auth/session").send({ email: member.email, password: TEST_PASSWORD });
    expect(memberSession.status).toBe(200);
    const cookie = cookieOf(memberSession.headers["set-cookie"], "conveyor_session")!;
    await putSso(
      owner,
      { issuer: provider.issuer, client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, email_domains: ["enforced.test"], enforce: true },
      200,
    );

    expectError(await api.request.post("/auth/login").send({ email: member.email, password: TEST_PASSWORD }), 403, "sso_required");
    expectError(await api.request.post("/auth/session").send({ email: member.email, password: TEST_PASSWORD }), 403, "sso_required");
    expectError(await api.request.get("/me").set(...bearer(member)), 403, "sso_required");
    expect((await api.request.get("/auth/session").set("Cookie", cookie)).status).toBe(401);
    const failures = await auditOf(owner.orgId, "session.login_failed");
    expect(failures.map((f) => f.details)).toEqual([
      { method: "password", reason: "sso_required" },
      { method: "password", reason: "sso_required" },
    ]);

    // The owner still logs in with a password, and makes keys.
    const ownerLogin = await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD });
    expect(ownerLogin.status).toBe(200);
    expect((await api.request.post("/api-keys").set("Authorization", `Bearer ${ownerLogin.body.token}`).send({ name: "ops" })).status).toBe(201);

    // A member signed in through the provider uses the console, but makes no API key.
    const viaSso = `member-${Date.now()}@enforced.test`;
    provider.signInAs(viaSso);
    const signedIn = await sessionOf(await callback(await startAt({ email: viaSso })));
    expect((await api.request.get("/jobs?limit=1").set("Cookie", signedIn.cookie)).status).toBe(200);
    expectError(
      await api.request.post("/api-keys").set("Cookie", signedIn.cookie).set("X-CSRF-Token", signedIn.body.csrf_token).send({ name: "mine" }),
      403,
      "sso_required",
    );
  });
});
