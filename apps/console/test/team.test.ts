// The team in a real browser against the real API: members with their roles, a role changed and a member removed
// by the owner; pending invites, a new invite's link copied and a pending one revoked (its link then refused);
// the invite link followed by a new person up to the console, logged in, in the invite's organization; and that
// person, a member, who has no Team in the navigation and is told so at /team. A second organization's members
// and invites never show.
import { addMember, uniqueEmail, type TestMember } from "@conveyor/api/testing";
import { checkNarrow, checkPage, dismissNotifications, field, PASSWORD, startRig, textLines, type Rig } from "./support/console";

let rig: Rig;
let admin: TestMember;
let member: TestMember;
let theirMember: TestMember;
const theirInvitee = uniqueEmail("their-invitee");
const pendingEmail = uniqueEmail("pending");
beforeAll(async () => {
  rig = await startRig();
  const { db } = rig.stack.api.database;
  const { config } = rig.stack.api.deps;
  admin = await addMember(db, config, rig.stack.owner.orgId, "admin");
  member = await addMember(db, config, rig.stack.owner.orgId, "member");
  // The second organization: a member and a pending invite of its own.
  theirMember = await addMember(db, config, rig.stack.otherOrg.orgId, "admin");
  await invite(theirMember, theirInvitee);
  await invite(rig.stack.owner, pendingEmail);
}, 120_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

async function invite(by: TestMember, email: string, role = "member"): Promise<string> {
  const res = await rig.stack.api.request.post("/org/invite").set("Authorization", `Bearer ${by.token}`).send({ email, role });
  if (res.status !== 201) throw new Error(`invite: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.invite_url as string;
}

async function members(of: TestMember = rig.stack.owner): Promise<{ id: string; email: string; role: string }[]> {
  return (await rig.stack.api.request.get("/org/members").set("Authorization", `Bearer ${of.token}`)).body;
}

async function pendingInvites(of: TestMember = rig.stack.owner): Promise<{ id: string; email: string }[]> {
  return (await rig.stack.api.request.get("/org/invites").set("Authorization", `Bearer ${of.token}`)).body;
}

describe("the team page", () => {
  it("lists members with roles; the owner changes a role and removes a member", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/team`);
    const rows = page.getByRole("table", { name: "Members" }).locator("tr[data-member]");
    await rows.nth(2).waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-member")))).toEqual([rig.stack.owner.email, admin.email, member.email]);
    // The owner's own row has no controls; the others have a role picker and a remove button.
    expect(await page.locator(`tr[data-member="${rig.stack.owner.email}"]`).getByRole("combobox").count()).toBe(0);
    expect(await page.getByRole("combobox", { name: `Role of ${admin.email}` }).inputValue()).toBe("admin");
    expect(await page.getByRole("combobox", { name: `Role of ${member.email}` }).inputValue()).toBe("member");
    // The second organization's people are not here.
    expect(await page.getByText(theirMember.email).count()).toBe(0);
    expect(await page.getByText(theirInvitee).count()).toBe(0);
    await page.locator(`tr[data-invite="${pendingEmail}"]`).waitFor();
    await checkPage(page, "team");
    await checkNarrow(page, "team");

    await page.getByRole("combobox", { name: `Role of ${member.email}` }).selectOption("admin");
    await page.getByText(`${member.email} is now an admin.`).waitFor();
    expect((await members()).find((m) => m.id === member.userId)?.role).toBe("admin");
    await page.getByRole("combobox", { name: `Role of ${member.email}` }).selectOption("member");
    await page.getByText(`${member.email} is now a member.`).waitFor();
    expect((await members()).find((m) => m.id === member.userId)?.role).toBe("member");

    await page.getByRole("button", { name: `Remove ${admin.email}` }).click();
    const confirm = page.getByRole("dialog", { name: "Remove this member?" });
    await confirm.getByText(`${admin.email} loses access`).waitFor();
    await checkPage(page, "team-remove-confirm");
    await confirm.getByRole("button", { name: "Remove" }).click();
    await page.locator(`tr[data-member="${admin.email}"]`).waitFor({ state: "detached" });
    expect((await members()).map((m) => m.email)).not.toContain(admin.email);
    // Removed means refused at once.
    expect((await rig.stack.api.request.get("/me").set("Authorization", `Bearer ${admin.token}`)).status).toBe(401);
  });

  it("at 375 px keeps each role whole and wraps e-mails only before @ or a dot (issue 23 #13)", async () => {
    const { db } = rig.stack.api.database;
    const longer = await addMember(db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");
    await db.pool.query("UPDATE users SET email = $2 WHERE id = $1", [
      longer.userId,
      `quartermaster.logistics.${longer.userId.slice(-6)}@example-freight.test`,
    ]);
    const email = `quartermaster.logistics.${longer.userId.slice(-6)}@example-freight.test`;
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 375, height: 740 } });
    await page.goto(`${rig.base}/team`);
    const row = page.locator(`tr[data-member="${email}"]`);
    await row.waitFor();
    // The whole role is shown inside the select, and the select inside the page.
    const role = page.getByRole("combobox", { name: `Role of ${email}` });
    const fit = await role.evaluate((select: HTMLSelectElement) => {
      const style = getComputedStyle(select);
      const probe = document.createElement("span");
      probe.style.font = style.font;
      probe.style.position = "absolute";
      probe.style.visibility = "hidden";
      probe.textContent = select.options[select.selectedIndex]!.text;
      document.body.append(probe);
      const text = probe.getBoundingClientRect().width;
      probe.remove();
      const box = select.getBoundingClientRect();
      const room = box.width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      // Inside the table's scroll box, not cut off by it.
      const scroller = select.closest(".mantine-ScrollArea-viewport") ?? document.documentElement;
      return { whole: text <= room, shown: box.right <= scroller.getBoundingClientRect().right + 0.5 };
    });
    expect(fit).toEqual({ whole: true, shown: true });
    // Nothing of the members' table is cut off: it needs no scrolling sideways, and removing is still offered.
    const table = page.getByRole("table", { name: "Members" });
    expect(await table.evaluate((el) => el.scrollWidth <= el.closest(".mantine-ScrollArea-viewport")!.clientWidth)).toBe(true);
    await row.getByRole("button", { name: `Remove ${email}` }).waitFor();
    const lines = await textLines(row.locator(`[data-email="${email}"]`));
    expect(lines.join("")).toBe(email);
    lines
      .slice(1)
      .forEach((line, i) => expect({ line, breaksWell: ["@", "."].includes(line[0]!) || lines[i]!.endsWith("-") }).toMatchObject({ breaksWell: true }));
    await checkPage(page, "team-narrow-roles");
    await db.pool.query("DELETE FROM memberships WHERE user_id = $1", [longer.userId]);
  });

  it("creates an invite with a link to copy, and revokes a pending one so its link stops working", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.base });
    await page.goto(`${rig.base}/team`);
    await page.getByRole("button", { name: "Invite someone" }).click();
    const dialog = page.getByRole("dialog", { name: "Invite a teammate" });
    await field(page, "Email").fill("not an email");
    await dialog.getByRole("button", { name: "Create invite" }).click();
    await dialog.getByText("must be a valid email").waitFor();
    // An existing member: the API's refusal at the email field.
    await field(page, "Email").fill(member.email);
    await dialog.getByRole("button", { name: "Create invite" }).click();
    await dialog.locator('[aria-invalid="true"]').waitFor();
    const refused = await rig.stack.api.request
      .post("/org/invite")
      .set("Authorization", `Bearer ${rig.stack.owner.token}`)
      .send({ email: member.email, role: "member" });
    await dialog.getByText(refused.body.error.message, { exact: true }).waitFor();

    const newcomer = uniqueEmail("newcomer");
    await field(page, "Email").fill(newcomer);
    await dialog.getByRole("button", { name: "Create invite" }).click();
    const shown = page.getByRole("dialog", { name: "Invite link" });
    const link = await shown.getByTestId("secret-value").innerText();
    expect(link).toMatch(new RegExp(`^${rig.base}/accept-invite\\?token=`));
    await shown.getByRole("button", { name: "Copy invite link" }).click();
    await shown.getByRole("button", { name: "Copied invite link" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await checkPage(page, "team-invite-link");
    await shown.getByRole("button", { name: "Done" }).click();
    await page.locator(`tr[data-invite="${newcomer}"]`).waitFor();
    // The link is shown once: the pending list has no link to show again.
    expect(await page.getByText(link).count()).toBe(0);

    await page.getByRole("button", { name: `Revoke the invite for ${newcomer}` }).click();
    await page.getByRole("dialog", { name: "Revoke this invite?" }).getByRole("button", { name: "Revoke" }).click();
    await page.locator(`tr[data-invite="${newcomer}"]`).waitFor({ state: "detached" });
    expect((await pendingInvites()).map((i) => i.email)).not.toContain(newcomer);
    const token = new URL(link).searchParams.get("token")!;
    expect((await rig.stack.api.request.get("/invite").query({ token })).status).toBe(410);
    // The second organization's invite is still pending for them.
    expect((await pendingInvites(theirMember)).map((i) => i.email)).toContain(theirInvitee);
  });
});

describe("an invite, followed", () => {
  it("ends logged in, in the console, in the invite's organization; a member sees no Team", async () => {
    const email = uniqueEmail("invitee");
    const link = await invite(rig.stack.owner, email);
    const context = await rig.context();
    const page = await context.newPage();
    await page.goto(link);
    await page.locator("#password").waitFor({ state: "visible" });
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.waitForURL(`${rig.base}/overview`);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const session = (await (await context.request.get(`${rig.base}/auth/session`)).json()) as { org: { id: string }; role: string; user: { email: string } };
    expect(session).toMatchObject({ org: { id: rig.stack.owner.orgId }, role: "member", user: { email } });
    await page.getByTestId("org-name").waitFor();
    expect(await page.getByTestId("org-name").innerText()).toBe(
      (await rig.stack.api.database.db.prisma.organization.findUniqueOrThrow({ where: { id: rig.stack.owner.orgId } })).name,
    );

    // A member: Team (and Webhooks) are not in the navigation…
    const nav = page.getByRole("navigation", { name: "Sections" });
    await nav.getByRole("link", { name: "Jobs" }).waitFor();
    expect(await nav.getByRole("link", { name: "Team" }).count()).toBe(0);
    expect(await nav.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
    // …and the address says so rather than failing.
    await page.goto(`${rig.base}/team`);
    await page.getByText("Owners and admins only").waitFor();
    expect(await page.getByRole("table").count()).toBe(0);
    await dismissNotifications(page);
    await checkPage(page, "team-member-refused");
    await checkNarrow(page, "team-member-refused");
  });
});
