// Team management (docs/reference/tenants.md#team-and-roles, docs/reference/tenants.md#team-api-for-the-console, docs/reference/robustness.md#r16, docs/reference/robustness.md#r17): the role table cell by cell, API keys refused on /org,
// removal and what it takes with it, role changes, pending invites and their withdrawal, members in pages, and
// another organization's ids answered like random ones.
import { newId } from "@conveyor/db";
import { signToken } from "../src/services/infrastructure/tokens";
import { expectError } from "./support/expect-error";
import { addMember, createApiKey, createOrg, uniqueEmail, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
});
afterAll(() => api.close());

type Team = { owner: TestMember; admin: TestMember; member: TestMember; key: string };

async function team(): Promise<Team> {
  const owner = await createOrg(api.database.db, api.deps.config);
  const admin = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
  const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  const { key } = await createApiKey(api.database.db, owner);
  return { owner, admin, member, key };
}

/** A second organization whose rows every test checks are untouched. */
async function bystander() {
  const t = await team();
  const snapshot = async () => ({
    memberships: await api.database.db.prisma.membership.findMany({ where: { orgId: t.owner.orgId }, orderBy: { userId: "asc" } }),
    keys: await api.database.db.prisma.apiKey.findMany({ where: { orgId: t.owner.orgId }, orderBy: { id: "asc" } }),
    invites: await api.database.db.prisma.invite.findMany({ where: { orgId: t.owner.orgId }, orderBy: { id: "asc" } }),
  });
  const before = await snapshot();
  return { ...t, expectUntouched: async () => expect(await snapshot()).toEqual(before) };
}

const bearer = (m: TestMember) => ["Authorization", `Bearer ${m.token}`] as const;

describe("GET /org/members", () => {
  it("lists the members with id, email, role and joined_at for the owner and the admin", async () => {
    const t = await team();
    const other = await bystander();
    for (const caller of [t.owner, t.admin]) {
      const res = await api.request.get("/org/members").set(...bearer(caller));
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        { id: t.owner.userId, email: t.owner.email, role: "owner", joined_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
        { id: t.admin.userId, email: t.admin.email, role: "admin", joined_at: expect.any(String) },
        { id: t.member.userId, email: t.member.email, role: "member", joined_at: expect.any(String) },
      ]);
      expect(res.text).not.toMatch(/password|hash/i);
    }
    await other.expectUntouched();
  });

  it("refuses a member with 403 forbidden", async () => {
    const t = await team();
    expectError(await api.request.get("/org/members").set(...bearer(t.member)), 403, "forbidden");
  });

  it("refuses an API key with 403 forbidden, even the owner's", async () => {
    const t = await team();
    expectError(await api.request.get("/org/members").set("X-API-Key", t.key), 403, "forbidden");
  });

  it("refuses a missing or invalid credential with 401", async () => {
    expectError(await api.request.get("/org/members"), 401, "unauthorized");
    expectError(await api.request.get("/org/members").set("X-API-Key", "cvk_nope"), 401, "unauthorized");
  });
});

describe("POST /org/invite role matrix", () => {
  const invite = (caller: TestMember | string, role: string, email = uniqueEmail("invitee")) => {
    const req = api.request.post("/org/invite").send({ email, role });
    return typeof caller === "string" ? req.set("X-API-Key", caller) : req.set(...bearer(caller));
  };

  it.each([
    ["owner", "member", 201],
    ["owner", "admin", 201],
    ["owner", "owner", 400],
    ["admin", "member", 201],
    ["admin", "admin", 403],
    ["admin", "owner", 400],
    ["member", "member", 403],
    ["member", "admin", 403],
    ["member", "owner", 403],
  ] as const)("%s inviting with role %s gets %i", async (callerRole, role, status) => {
    const t = await team();
    const other = await bystander();
    const res = await invite(t[callerRole], role);
    expect(res.status).toBe(status);
    if (status === 201) {
      expect(res.body).toEqual({
        invite_url: expect.stringMatching(/\/accept-invite\?token=[A-Za-z0-9_-]{43}$/),
        email: expect.any(String),
        expires_at: expect.any(String),
      });
      const stored = await api.database.db.prisma.invite.findFirstOrThrow({ where: { email: res.body.email } });
      expect(stored).toMatchObject({ orgId: t.owner.orgId, role, invitedBy: t[callerRole].userId });
    } else {
      expectError(res, status, status === 400 ? "validation_failed" : "forbidden");
      expect(await api.database.db.prisma.invite.count({ where: { orgId: t.owner.orgId } })).toBe(0);
    }
    if (status === 400) expect(res.body.error.message).toMatch(/ownership is not granted by invite/i);
    await other.expectUntouched();
  });

  it.each(["member", "admin", "owner"])("an API key inviting with role %s gets 403", async (role) => {
    const t = await team();
    expectError(await invite(t.key, role), 403, "forbidden");
  });

  it("refuses an email that is already a member with 409 already_member, whatever its case", async () => {
    const t = await team();
    expectError(await invite(t.owner, "member", `  ${t.member.email.toUpperCase()} `), 409, "already_member");
  });

  it("allows inviting someone who is a member of another organization only", async () => {
    const t = await team();
    const other = await bystander();
    const res = await invite(t.owner, "member", other.member.email);
    expect(res.status).toBe(201);
    await other.expectUntouched();
  });

  it("refuses unknown fields (org_id, invited_by) and bad values with 400 validation_failed", async () => {
    const t = await team();
    const other = await bystander();
    for (const body of [
      { email: uniqueEmail(), role: "member", org_id: other.owner.orgId },
      { email: uniqueEmail(), role: "member", invited_by: other.owner.userId },
      { email: "not an email", role: "member" },
      { email: uniqueEmail(), role: "superuser" },
      { email: uniqueEmail() },
    ]) {
      expectError(
        await api.request
          .post("/org/invite")
          .set(...bearer(t.owner))
          .send(body),
        400,
        "validation_failed",
      );
    }
    expect(await api.database.db.prisma.invite.count({ where: { orgId: { in: [t.owner.orgId, other.owner.orgId] } } })).toBe(0);
  });

  it("returns expires_at 72 hours after creation and stores the email trimmed and lower-cased", async () => {
    const t = await team();
    const email = uniqueEmail("Upper");
    const before = api.clock.now().getTime();
    const res = await invite(t.owner, "member", ` ${email.toUpperCase()}  `);
    expect(res.body.email).toBe(email.toLowerCase());
    expect(new Date(res.body.expires_at).getTime() - before).toBe(72 * 3600 * 1000);
    expect(res.body.invite_url.startsWith(`${api.deps.config.PUBLIC_URL}/accept-invite?token=`)).toBe(true);
  });
});

describe("DELETE /org/members/{user_id}", () => {
  const remove = (caller: TestMember | string, userId: string) => {
    const req = api.request.delete(`/org/members/${userId}`);
    return typeof caller === "string" ? req.set("X-API-Key", caller) : req.set(...bearer(caller));
  };

  it("lets the owner remove a member: 204, the membership, its API keys and its pending invites go", async () => {
    const t = await team();
    const other = await bystander();
    const adminKey = await createApiKey(api.database.db, t.admin);
    const pending = await api.request
      .post("/org/invite")
      .set(...bearer(t.admin))
      .send({ email: uniqueEmail("backdoor"), role: "member" });
    const res = await remove(t.owner, t.admin.userId);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await api.database.db.prisma.membership.findUnique({ where: { orgId_userId: { orgId: t.owner.orgId, userId: t.admin.userId } } })).toBeNull();
    expect((await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: adminKey.id } })).revokedAt).toBeInstanceOf(Date);
    // The removed admin's invite link no longer works.
    const token = new URL(pending.body.invite_url).searchParams.get("token")!;
    expectError(await api.request.get("/invite").query({ token }), 410, "invite_expired");
    // Their token stops working at once; the owner's key and the other members are untouched.
    expectError(await api.request.get("/me").set(...bearer(t.admin)), 401, "unauthorized");
    expect((await api.request.get("/me").set(...bearer(t.member))).status).toBe(200);
    expect((await api.database.db.prisma.apiKey.findFirstOrThrow({ where: { orgId: t.owner.orgId, createdBy: t.owner.userId } })).revokedAt).toBeNull();
    await other.expectUntouched();
  });

  it("removes only that organization's membership, not the user's other organizations", async () => {
    const t = await team();
    const other = await bystander();
    const both = await addMember(api.database.db, api.deps.config, other.owner.orgId, "member", t.member.userId);
    const keyElsewhere = await createApiKey(api.database.db, both);
    const before = await bystander();
    expect((await remove(t.owner, t.member.userId)).status).toBe(204);
    expect((await api.request.get("/me").set(...bearer(both))).status).toBe(200);
    expect((await api.database.db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyElsewhere.id } })).revokedAt).toBeNull();
    expect(await api.database.db.prisma.user.findUnique({ where: { id: t.member.userId } })).not.toBeNull();
    await before.expectUntouched();
  });

  it("refuses the owner removing themselves with 409 cannot_remove_self", async () => {
    const t = await team();
    expectError(await remove(t.owner, t.owner.userId), 409, "cannot_remove_self");
    expectError(await remove(t.owner, t.owner.userId.toUpperCase()), 409, "cannot_remove_self");
  });

  it("refuses the admin and the member with 403 forbidden, even for themselves", async () => {
    const t = await team();
    for (const caller of [t.admin, t.member]) {
      expectError(await remove(caller, t.member.userId), 403, "forbidden");
      expectError(await remove(caller, caller.userId), 403, "forbidden");
    }
    expect(await api.database.db.prisma.membership.count({ where: { orgId: t.owner.orgId } })).toBe(3);
  });

  it("refuses an API key with 403 forbidden", async () => {
    const t = await team();
    expectError(await remove(t.key, t.member.userId), 403, "forbidden");
  });

  it("answers 404 for a non-member, another organization's member, a random id and a malformed id, identically", async () => {
    const t = await team();
    const other = await bystander();
    const outsider = await remove(t.owner, other.member.userId);
    expectError(outsider, 404, "not_found");
    const random = await remove(t.owner, newId());
    const malformed = await remove(t.owner, "not-a-uuid");
    expect(outsider.body).toEqual(random.body);
    expect(malformed.body).toEqual(random.body);
    await other.expectUntouched();
  });
});

describe("/me with an API key", () => {
  it("refuses with 403 forbidden", async () => {
    const t = await team();
    expectError(await api.request.get("/me").set("X-API-Key", t.key), 403, "forbidden");
  });
});

describe("PATCH /org/members/{user_id} (docs/reference/tenants.md#team-api-for-the-console)", () => {
  const patch = (caller: TestMember | string, userId: string, body: object) => {
    const req = api.request.patch(`/org/members/${userId}`).send(body);
    return typeof caller === "string" ? req.set("X-API-Key", caller) : req.set(...bearer(caller));
  };

  it("lets the owner make a member an admin and back, answering the member; it applies to their next request", async () => {
    const t = await team();
    const other = await bystander();
    expectError(await api.request.get("/org/members").set(...bearer(t.member)), 403, "forbidden");
    const up = await patch(t.owner, t.member.userId, { role: "admin" });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ id: t.member.userId, email: t.member.email, role: "admin", joined_at: expect.stringMatching(/Z$/) });
    expect((await api.request.get("/org/members").set(...bearer(t.member))).status).toBe(200);
    expect((await api.request.get("/me").set(...bearer(t.member))).body.role).toBe("admin");
    const down = await patch(t.owner, t.admin.userId, { role: "member" });
    expect(down.body.role).toBe("member");
    expectError(await api.request.get("/org/members").set(...bearer(t.admin)), 403, "forbidden");
    // The same role again changes nothing and says so.
    expect((await patch(t.owner, t.admin.userId, { role: "member" })).body.role).toBe("member");
    await other.expectUntouched();
  });

  it("refuses the owner's own role with 409 cannot_change_own_role", async () => {
    const t = await team();
    expectError(await patch(t.owner, t.owner.userId, { role: "admin" }), 409, "cannot_change_own_role");
    expectError(await patch(t.owner, t.owner.userId.toUpperCase(), { role: "member" }), 409, "cannot_change_own_role");
    expect((await api.request.get("/me").set(...bearer(t.owner))).body.role).toBe("owner");
  });

  it("neither grants nor takes ownership: role owner, and another owner's role, are 400", async () => {
    const t = await team();
    const res = await patch(t.owner, t.member.userId, { role: "owner" });
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details).toEqual([{ path: "role", message: expect.stringContaining("ownership") }]);
    const coOwner = await addMember(api.database.db, api.deps.config, t.owner.orgId, "owner");
    expectError(await patch(t.owner, coOwner.userId, { role: "member" }), 400, "validation_failed");
    expect((await api.request.get("/me").set(...bearer(coOwner))).body.role).toBe("owner");
  });

  it("refuses admins, members and API keys with 403", async () => {
    const t = await team();
    for (const caller of [t.admin, t.member, t.key]) expectError(await patch(caller, t.member.userId, { role: "admin" }), 403, "forbidden");
    expect((await api.request.get("/me").set(...bearer(t.member))).body.role).toBe("member");
  });

  it("answers 404 for another organization's member, a random id and a malformed id, identically", async () => {
    const t = await team();
    const other = await bystander();
    const outsider = await patch(t.owner, other.member.userId, { role: "admin" });
    expectError(outsider, 404, "not_found");
    expect((await patch(t.owner, newId(), { role: "admin" })).body).toEqual(outsider.body);
    expect((await patch(t.owner, "not-a-uuid", { role: "admin" })).body).toEqual(outsider.body);
    await other.expectUntouched();
  });

  it("refuses unknown fields and a missing role with 400", async () => {
    const t = await team();
    for (const body of [{ role: "admin", org_id: newId() }, {}, { role: "superuser" }])
      expectError(await patch(t.owner, t.member.userId, body), 400, "validation_failed");
  });
});

describe("GET /org/invites and DELETE /org/invites/{id} (docs/reference/tenants.md#team-api-for-the-console)", () => {
  const invite = async (caller: TestMember, email = uniqueEmail("pending"), role = "member") => {
    const res = await api.request
      .post("/org/invite")
      .set(...bearer(caller))
      .send({ email, role });
    expect(res.status).toBe(201);
    return { email, token: new URL(res.body.invite_url).searchParams.get("token")! };
  };

  it("lists the pending invites newest first with who sent them, never a token; used, replaced and expired ones are gone", async () => {
    const t = await team();
    const other = await bystander();
    // Another organization's pending invite is never listed.
    await invite((await team()).owner);
    const first = await invite(t.owner, uniqueEmail("first"), "admin");
    const second = await invite(t.admin, uniqueEmail("second"));
    const replaced = await invite(t.owner, uniqueEmail("replaced"));
    await invite(t.owner, replaced.email);
    const used = await invite(t.owner);
    expect((await api.request.post("/invite/accept").send({ token: used.token, password: "a long enough new passphrase" })).status).toBe(200);

    for (const caller of [t.owner, t.admin]) {
      const res = await api.request.get("/org/invites").set(...bearer(caller));
      expect(res.status).toBe(200);
      expect(res.body.map((i: { email: string }) => i.email)).toEqual([replaced.email, second.email, first.email]);
      const stored = await api.database.db.prisma.invite.findFirstOrThrow({ where: { email: first.email } });
      expect(res.body[2]).toEqual({
        id: stored.id,
        email: first.email,
        role: "admin",
        expires_at: stored.expiresAt.toISOString(),
        invited_by: t.owner.userId,
        created_at: stored.createdAt.toISOString(),
      });
      expect(res.body[1].invited_by).toBe(t.admin.userId);
      for (const token of [first.token, second.token, replaced.token]) expect(res.text).not.toContain(token);
      expect(res.text).not.toMatch(/token|hash/i);
    }
    try {
      api.clock.advance(72 * 3600 * 1000);
      const later = signToken({ userId: t.owner.userId, orgId: t.owner.orgId }, api.deps.config, api.clock.now());
      expect((await api.request.get("/org/invites").set("Authorization", `Bearer ${later}`)).body).toEqual([]);
    } finally {
      api.clock.advance(-72 * 3600 * 1000);
    }
    await other.expectUntouched();
  });

  it("refuses members and API keys with 403", async () => {
    const t = await team();
    expectError(await api.request.get("/org/invites").set(...bearer(t.member)), 403, "forbidden");
    expectError(await api.request.get("/org/invites").set("X-API-Key", t.key), 403, "forbidden");
    const { email } = await invite(t.owner);
    const id = (await api.database.db.prisma.invite.findFirstOrThrow({ where: { email } })).id;
    expectError(await api.request.delete(`/org/invites/${id}`).set(...bearer(t.member)), 403, "forbidden");
    expectError(await api.request.delete(`/org/invites/${id}`).set("X-API-Key", t.key), 403, "forbidden");
  });

  it("withdraws an invite: 204, its link answers 410 invite_expired, and it leaves the list", async () => {
    const t = await team();
    const other = await bystander();
    const pending = await invite(t.owner, uniqueEmail("withdrawn"), "admin");
    const id = (await api.database.db.prisma.invite.findFirstOrThrow({ where: { email: pending.email } })).id;
    const res = await api.request.delete(`/org/invites/${id}`).set(...bearer(t.admin));
    expect(res.status).toBe(204);
    expectError(await api.request.get("/invite").query({ token: pending.token }), 410, "invite_expired");
    expectError(await api.request.post("/invite/accept").send({ token: pending.token, password: "a long enough new passphrase" }), 410, "invite_expired");
    expect((await api.request.get("/org/invites").set(...bearer(t.owner))).body).toEqual([]);
    // Withdrawn once only.
    expectError(await api.request.delete(`/org/invites/${id}`).set(...bearer(t.owner)), 404, "not_found");
    await other.expectUntouched();
  });

  it("answers 404 for another organization's invite (which keeps working), a random id and a malformed one", async () => {
    const t = await team();
    const other = await bystander();
    const theirs = await invite(other.owner);
    const before = await bystander();
    const id = (await api.database.db.prisma.invite.findFirstOrThrow({ where: { email: theirs.email } })).id;
    const foreign = await api.request.delete(`/org/invites/${id}`).set(...bearer(t.owner));
    expectError(foreign, 404, "not_found");
    expect((await api.request.delete(`/org/invites/${newId()}`).set(...bearer(t.owner))).body).toEqual(foreign.body);
    expect((await api.request.delete("/org/invites/nope").set(...bearer(t.owner))).body).toEqual(foreign.body);
    expect((await api.request.get("/invite").query({ token: theirs.token })).status).toBe(200);
    expect((await api.request.get("/org/invites").set(...bearer(t.owner))).body).toEqual([]);
    await before.expectUntouched();
  });
});

describe("GET /org/members paging", () => {
  it("pages with limit and a Link to the next page, in joining order, and the pages add up to the whole list", async () => {
    const t = await team();
    const other = await bystander();
    for (let i = 0; i < 3; i++) await addMember(api.database.db, api.deps.config, t.owner.orgId, "member");
    const all = (await api.request.get("/org/members").set(...bearer(t.owner))).body as { id: string }[];
    expect(all).toHaveLength(6);
    const seen: string[] = [];
    let path: string | null = "/org/members?limit=4";
    const links: (string | undefined)[] = [];
    while (path) {
      const res = await api.request.get(path).set(...bearer(t.admin));
      expect(res.status).toBe(200);
      seen.push(...res.body.map((m: { id: string }) => m.id));
      const link = res.headers.link as string | undefined;
      links.push(link);
      path = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>/.exec(link)![1]!).search : null;
    }
    expect(links[0]).toMatch(new RegExp(`^<${api.deps.config.PUBLIC_URL}/org/members\\?limit=4&cursor=[A-Za-z0-9_-]+>; rel="next"$`));
    expect(links).toHaveLength(2);
    expect(links[1]).toBeUndefined();
    expect(seen).toEqual(all.map((m) => m.id));
    await other.expectUntouched();
  });

  it("has no Link when one page holds everyone, and refuses a cursor without limit, a forged cursor and a bad limit with 400", async () => {
    const t = await team();
    const res = await api.request.get("/org/members?limit=3").set(...bearer(t.owner));
    expect(res.body).toHaveLength(3);
    expect(res.headers.link).toBeUndefined();
    const forged = Buffer.from(`not a date|${newId()}`).toString("base64url");
    for (const query of [`cursor=${forged}`, `limit=2&cursor=${forged}`, "limit=2&cursor=%%%", "limit=0", "limit=1001", "limit=x", "sort=email"]) {
      expectError(await api.request.get(`/org/members?${query}`).set(...bearer(t.owner)), 400, "validation_failed");
    }
  });
});
