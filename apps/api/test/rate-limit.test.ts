// Rate limits (docs/reference/tenants.md#authentication, docs/reference/robustness.md#r14, docs/reference/robustness.md#r1): per client IP on the public auth endpoints, per account on
// failed passwords, per org on the job endpoints; counted in Redis so replicas share one budget; the job
// limit fails open and the auth limits fall back to memory while Redis is away.
import { randomBytes } from "node:crypto";
import express from "express";
import supertest from "supertest";
import { createRedis, redisKeyPrefix, waitForRedis, type RedisClient } from "@conveyor/queue";
import { startPrivateRedis, type PrivateRedis } from "@conveyor/testkit";
import { createApp } from "../src/app";
import { createAuthenticator } from "../src/middleware/authenticate";
import { errorHandler } from "../src/middleware/error-handler";
import { FAILED_LOGINS_PER_ACCOUNT, createRateLimits } from "../src/middleware/rate-limit";
import { requestContext } from "../src/middleware/request-context";
import { expectError } from "./support/expect-error";
import { createOrg, TEST_PASSWORD, uniqueEmail, startTestApi, type TestApi } from "@conveyor/api/testing";

const LIMIT = 3;
/** A client address no other test uses (TRUST_PROXY=1 makes X-Forwarded-For the client IP). */
const newIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
const PASSWORD = "a perfectly long passphrase";

function expectLimited(res: supertest.Response, limit: number) {
  expectError(res, 429, "rate_limited");
  const retryAfter = Number(res.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(res.headers["ratelimit-limit"]).toBe(String(limit));
  expect(res.headers["ratelimit-remaining"]).toBe("0");
  expect(res.headers["ratelimit-reset"]).toBe(String(retryAfter));
}

describe("auth endpoints, per client IP (AUTH_RATE_LIMIT_PER_MIN)", () => {
  let api: TestApi;
  let secondRedis: RedisClient;
  /** A second API instance (another replica) on the same Redis prefix, with its own connection. */
  let replica: ReturnType<typeof supertest>;
  beforeAll(async () => {
    api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: String(LIMIT), TRUST_PROXY: "1" });
    secondRedis = createRedis(api.deps.config.REDIS_URL, "producer");
    secondRedis.on("error", () => {});
    await waitForRedis(secondRedis, 5_000);
    replica = supertest(createApp({ ...api.deps, redis: secondRedis }));
  });
  afterAll(async () => {
    secondRedis.disconnect();
    await api.close();
  });

  it("allows the limit on POST /auth/login with RateLimit-* headers, then answers 429 rate_limited with Retry-After", async () => {
    const ip = newIp();
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await api.request.post("/auth/login").set("X-Forwarded-For", ip).send({ email: uniqueEmail(), password: PASSWORD });
      expect(res.status).toBe(401);
      expect(res.headers["ratelimit-limit"]).toBe(String(LIMIT));
      expect(Number(res.headers["ratelimit-reset"])).toBeLessThanOrEqual(60);
      remaining.push(String(res.headers["ratelimit-remaining"]));
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    expectLimited(await api.request.post("/auth/login").set("X-Forwarded-For", ip).send({ email: uniqueEmail(), password: PASSWORD }), LIMIT);
    // Another client is not affected.
    expect((await api.request.post("/auth/login").set("X-Forwarded-For", newIp()).send({ email: uniqueEmail(), password: PASSWORD })).status).toBe(401);
  });

  it("limits POST /auth/signup, GET /invite and POST /invite/accept the same way", async () => {
    const ip = newIp();
    const calls = [
      () => api.request.post("/auth/signup").set("X-Forwarded-For", ip).send({ email: uniqueEmail(), password: PASSWORD, org_name: "Limited" }),
      () =>
        api.request
          .get("/invite")
          .set("X-Forwarded-For", ip)
          .query({ token: "A".repeat(43) }),
      () =>
        api.request
          .post("/invite/accept")
          .set("X-Forwarded-For", ip)
          .send({ token: "A".repeat(43), password: PASSWORD }),
    ];
    for (const call of calls) {
      for (let i = 0; i < LIMIT; i++) expect((await call()).status).not.toBe(429);
      expectLimited(await call(), LIMIT);
    }
  });

  it("is shared by API replicas on the same Redis prefix: a second replica does not double the budget", async () => {
    const ip = newIp();
    const statuses: number[] = [];
    for (let i = 0; i < 2 * LIMIT; i++) {
      const app = i % 2 === 0 ? api.request : replica;
      statuses.push((await app.post("/auth/login").set("X-Forwarded-For", ip).send({ email: uniqueEmail(), password: PASSWORD })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    const keys = await secondRedis.keys(`${redisKeyPrefix(api.deps.config.REDIS_PREFIX)}:rl:auth:login:*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it("does not limit authenticated endpoints such as GET /me by IP", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const ip = newIp();
    for (let i = 0; i < LIMIT + 2; i++) {
      expect((await api.request.get("/me").set("X-Forwarded-For", ip).set("Authorization", `Bearer ${owner.token}`)).status).toBe(200);
    }
  });
});

describe("failed logins per account (10 per 15 minutes)", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "1000", TRUST_PROXY: "1" });
  });
  afterAll(() => api.close());

  const attempt = (email: string, password: string) => api.request.post("/auth/login").set("X-Forwarded-For", newIp()).send({ email, password });

  it("refuses the account with 429 after 10 failures from any addresses, even with the right password", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    const bystander = await createOrg(api.database.db, api.deps.config);
    for (let i = 0; i < FAILED_LOGINS_PER_ACCOUNT; i++) expectError(await attempt(user.email, `wrong password number ${i}`), 401, "unauthorized");
    const locked = await attempt(user.email, TEST_PASSWORD);
    expectLimited(locked, FAILED_LOGINS_PER_ACCOUNT);
    expect(Number(locked.headers["retry-after"])).toBeLessThanOrEqual(15 * 60);
    expect((await attempt(` ${user.email.toUpperCase()}`, TEST_PASSWORD)).status).toBe(429);
    expect((await attempt(bystander.email, TEST_PASSWORD)).status).toBe(200);
  });

  it("checks at most 10 of 15 parallel wrong passwords for one account: the count comes before the check", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => attempt(user.email, `parallel wrong password ${i}`)));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(FAILED_LOGINS_PER_ACCOUNT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15 - FAILED_LOGINS_PER_ACCOUNT);
    expectLimited(await attempt(user.email, TEST_PASSWORD), FAILED_LOGINS_PER_ACCOUNT);
  });

  it("treats an unknown email exactly like an existing one", async () => {
    const ghost = uniqueEmail("ghost");
    for (let i = 0; i < FAILED_LOGINS_PER_ACCOUNT; i++) expect((await attempt(ghost, PASSWORD)).status).toBe(401);
    expectLimited(await attempt(ghost, PASSWORD), FAILED_LOGINS_PER_ACCOUNT);
  });

  it("starts counting again after a successful login", async () => {
    const user = await createOrg(api.database.db, api.deps.config);
    for (let i = 0; i < FAILED_LOGINS_PER_ACCOUNT - 1; i++) expect((await attempt(user.email, "wrong wrong wrong")).status).toBe(401);
    expect((await attempt(user.email, TEST_PASSWORD)).status).toBe(200);
    for (let i = 0; i < FAILED_LOGINS_PER_ACCOUNT - 1; i++) expect((await attempt(user.email, "wrong wrong wrong")).status).toBe(401);
    expect((await attempt(user.email, TEST_PASSWORD)).status).toBe(200);
  });

  it("counts wrong passwords given to accept an invite for an existing account", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const existing = await createOrg(api.database.db, api.deps.config);
    const invite = await api.request.post("/org/invite").set("Authorization", `Bearer ${owner.token}`).send({ email: existing.email, role: "member" });
    const token = new URL(invite.body.invite_url).searchParams.get("token");
    for (let i = 0; i < FAILED_LOGINS_PER_ACCOUNT; i++) {
      expect((await api.request.post("/invite/accept").set("X-Forwarded-For", newIp()).send({ token, password: "guessing the password" })).status).toBe(401);
    }
    expectLimited(await api.request.post("/invite/accept").set("X-Forwarded-For", newIp()).send({ token, password: TEST_PASSWORD }), FAILED_LOGINS_PER_ACCOUNT);
    expect((await attempt(existing.email, TEST_PASSWORD)).status).toBe(429);
  });
});

describe("AUTH_RATE_LIMIT_PER_MIN=0", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
  });
  afterAll(() => api.close());

  it("turns the per-IP limit off", async () => {
    for (let i = 0; i < 25; i++) {
      const res = await api.request.get("/invite").query({ token: "A".repeat(43) });
      expect(res.status).toBe(404);
      expect(res.headers["ratelimit-limit"]).toBeUndefined();
    }
  });
});

describe("job endpoints per org (API_RATE_LIMIT_PER_SEC), with Redis up and down", () => {
  let redis: PrivateRedis;
  let api: TestApi;
  /** The job routes' chain as the lead wires it: authenticate, then rateLimits.jobsByOrg. */
  let jobsProbe: ReturnType<typeof supertest>;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    api = await startTestApi({ REDIS_URL: redis.url, API_RATE_LIMIT_PER_SEC: "5", AUTH_RATE_LIMIT_PER_MIN: String(LIMIT), TRUST_PROXY: "1" });
    const authenticate = createAuthenticator(api.deps);
    const limits = createRateLimits(api.deps);
    jobsProbe = supertest(
      express()
        .use(requestContext(api.deps.logger))
        .post("/jobs", authenticate("job"), limits.jobsByOrg, (_req, res) => res.status(202).json({ status: "pending" }))
        .use(errorHandler),
    );
  });
  afterAll(async () => {
    // Each test that stops Redis starts it again in its finally block.
    await api.close();
    await redis.stop();
  });

  it("limits an organization to API_RATE_LIMIT_PER_SEC with 429 and RateLimit-* headers, without touching other orgs", async () => {
    const busy = await createOrg(api.database.db, api.deps.config);
    const quiet = await createOrg(api.database.db, api.deps.config);
    const results = await Promise.all(Array.from({ length: 30 }, () => jobsProbe.post("/jobs").set("Authorization", `Bearer ${busy.token}`).send({})));
    const refused = results.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expectLimited(refused[0]!, 5);
    const accepted = results.find((r) => r.status === 202)!;
    expect(accepted.headers["ratelimit-limit"]).toBe("5");
    expect((await jobsProbe.post("/jobs").set("Authorization", `Bearer ${quiet.token}`).send({})).status).toBe(202);
  });

  it("fails open while Redis is down: job requests are still accepted", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    await redis.stop();
    try {
      for (let i = 0; i < 12; i++) {
        expect((await jobsProbe.post("/jobs").set("Authorization", `Bearer ${owner.token}`).send({})).status).toBe(202);
      }
    } finally {
      await redis.start();
    }
  });

  it("keeps limiting the auth endpoints per process while Redis is down", async () => {
    await redis.stop();
    try {
      const ip = newIp();
      for (let i = 0; i < LIMIT; i++) {
        expect(
          (
            await api.request
              .get("/invite")
              .set("X-Forwarded-For", ip)
              .query({ token: "A".repeat(43) })
          ).status,
        ).toBe(404);
      }
      expectLimited(
        await api.request
          .get("/invite")
          .set("X-Forwarded-For", ip)
          .query({ token: "A".repeat(43) }),
        LIMIT,
      );
    } finally {
      await redis.start();
    }
  });
});
