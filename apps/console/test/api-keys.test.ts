// API keys in a real browser against the real API: a new key shown once with a copy button, the list with each
// key's last use (after the key is used over HTTP), and a revoked key refused over HTTP. A second organization's
// keys never show.
import { waitFor } from "@conveyor/testkit";
import { checkNarrow, checkPage, dismissNotifications, field, rigForFile, textLines } from "./support/console";

const rig = rigForFile();

/** GET /jobs over plain HTTP with a key, as a service would. */
const useKey = async (key: string) => (await fetch(`${rig.base}/jobs?limit=1`, { headers: { "X-API-Key": key, Accept: "application/json" } })).status;

describe("API keys", () => {
  it("creates a key shown once with a copy button, shows its last use, and revokes it", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.base });
    await page.goto(`${rig.base}/api-keys`);
    const table = page.getByRole("table", { name: "API keys" });
    await table.getByText("test key").waitFor();
    // The second organization's key is not ours to see.
    expect(await page.getByText("second org key").count()).toBe(0);

    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create an API key" });
    await dialog.getByRole("button", { name: "Create key" }).click();
    await dialog.getByText("is required").waitFor();
    await field(page, "Name").fill("billing-service");
    await dialog.getByRole("button", { name: "Create key" }).click();

    const shown = page.getByRole("dialog", { name: "Your new key" });
    const key = await shown.getByTestId("secret-value").innerText();
    expect(key).toMatch(/^cvk_[A-Za-z0-9_-]{20,}$/);
    await shown.getByRole("button", { name: "Copy API key" }).click();
    await shown.getByRole("button", { name: "Copied API key" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await checkPage(page, "api-keys-created");
    await shown.getByRole("button", { name: "Done" }).click();
    await shown.waitFor({ state: "detached" });

    // Shown once: the list shows its prefix, never the key; nothing on the page holds it any more.
    const row = table.getByRole("row").filter({ hasText: "billing-service" });
    await row.waitFor();
    expect(await row.innerText()).toContain(`${key.slice(0, 8)}…`);
    expect(await row.innerText()).toContain("Never");
    expect(await page.content()).not.toContain(key);

    // Used over HTTP by a service: the list shows when (the console rig's API runs on real time, so "when" is
    // between the request's start and its answer, on the API's clock).
    const usedFrom = rig.stack.api.deps.clock.now().getTime();
    expect(await useKey(key)).toBe(200);
    const usedBy = rig.stack.api.deps.clock.now().getTime();
    await waitFor(
      async () => {
        await page.reload();
        await row.waitFor();
        return (await row.locator("time").count()) === 2;
      },
      "the key's last use on the page",
      15_000,
      250,
    );
    const lastUsed = Date.parse((await row.locator("time").nth(1).getAttribute("datetime"))!);
    expect(lastUsed).toBeGreaterThanOrEqual(usedFrom);
    expect(lastUsed).toBeLessThanOrEqual(usedBy);
    await dismissNotifications(page);
    await checkPage(page, "api-keys");
    await checkNarrow(page, "api-keys");

    await page.getByRole("button", { name: "Revoke billing-service" }).click();
    const confirm = page.getByRole("dialog", { name: "Revoke this key?" });
    await confirm.getByText("Services using “billing-service” are refused").waitFor();
    await confirm.getByRole("button", { name: "Revoke" }).click();
    await row.waitFor({ state: "detached" });
    // Refused over HTTP within seconds (docs/reference/tenants.md#authentication: 5 s at most).
    await waitFor(async () => (await useKey(key)) === 401, "the revoked key refused", 6_000, 100);
    // The stack's own key still works.
    expect(await useKey(rig.stack.apiKey)).toBe(200);
  });

  it("shows who created each key: the person's e-mail, or You (issue 23 #11)", async () => {
    const { addMember, createApiKey } = await import("@conveyor/api/testing");
    const admin = await addMember(rig.stack.api.database.db, rig.stack.api.deps.config, rig.stack.owner.orgId, "admin");
    await createApiKey(rig.stack.api.database.db, admin, "reporting-service");
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/api-keys`);
    const table = page.getByRole("table", { name: "API keys" });
    await table.getByRole("columnheader", { name: "Created by" }).waitFor();
    const theirs = table.getByRole("row").filter({ hasText: "reporting-service" });
    await theirs.getByRole("cell", { name: admin.email }).waitFor();
    await table.getByRole("row").filter({ hasText: "test key" }).getByRole("cell", { name: "You", exact: true }).waitFor();
    await checkPage(page, "api-keys-created-by");
    // At 375 px it shows under the key's name, and the e-mail wraps only before its "@" or a dot (issue 23 #13).
    await checkNarrow(page, "api-keys-created-by");
    await page.setViewportSize({ width: 375, height: 740 });
    await theirs.getByText(`by ${admin.email}`).waitFor();
    const lines = await textLines(theirs.locator(`[data-email="${admin.email}"]`).filter({ visible: true }));
    expect(lines.join("")).toBe(admin.email);
    // Where a line may end: before "@" or a dot, or after a hyphen (never inside a run of letters and digits).
    lines
      .slice(1)
      .forEach((line, i) => expect({ line, breaksWell: ["@", "."].includes(line[0]!) || lines[i]!.endsWith("-") }).toMatchObject({ breaksWell: true }));
  });

  it("shows the empty state in an organization without keys", async () => {
    const { createOrg } = await import("@conveyor/api/testing");
    const fresh = await createOrg(rig.stack.api.database.db, rig.stack.api.deps.config, "Keyless Ltd");
    const page = await rig.loggedIn(fresh.email);
    await page.goto(`${rig.base}/api-keys`);
    await page.getByText("No API keys yet").waitFor();
    await checkPage(page, "api-keys-empty");
  });
});
