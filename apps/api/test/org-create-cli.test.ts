// `npm run org:create` as a real process (docs/reference/tenants.md#authentication): same configuration and service as signup, password
// from ORG_CREATE_PASSWORD (never printed), one clear line on every refusal.
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "@conveyor/testkit";
import { uniqueEmail, startTestApi, type TestApi } from "@conveyor/api/testing";

const PASSWORD = "operator chosen passphrase";
const entry = path.join(repoRoot, "apps/api/src/cli/org-create.ts");
const tsx = pathToFileURL(path.join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0", ALLOW_SIGNUP: "false" });
});
afterAll(() => api.close());

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=conveyor-source", "--import", tsx, entry, ...args],
      {
        // A scratch directory, so a developer's .env is not read; stdin is not a terminal.
        cwd: mkdtempSync(path.join(os.tmpdir(), "conveyor-cli-")),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: os.tmpdir(), DATABASE_URL: api.database.url, BCRYPT_COST: "4", ALLOW_SIGNUP: "false", ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("npm run org:create", () => {
  it("creates the organization and its owner with the password from ORG_CREATE_PASSWORD, who can then log in", async () => {
    const email = uniqueEmail("operator");
    const result = await run(["--email", `  ${email.toUpperCase()} `, "--org", "Operated Inc"], { ORG_CREATE_PASSWORD: PASSWORD });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(new RegExp(`^Created organization "Operated Inc" \\([0-9a-f-]{36}\\) with owner ${email} \\([0-9a-f-]{36}\\)\\.`));
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    const login = await api.request.post("/auth/login").send({ email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.user.role).toBe("owner");
    expect(login.body.orgs).toEqual([{ id: expect.any(String), name: "Operated Inc", role: "owner" }]);
  });

  it("refuses an email that already has an account, in one line, creating nothing", async () => {
    const email = uniqueEmail("twice");
    expect((await run(["--email", email, "--org", "First"], { ORG_CREATE_PASSWORD: PASSWORD })).code).toBe(0);
    const again = await run(["--email", email, "--org", "Second"], { ORG_CREATE_PASSWORD: PASSWORD });
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe("An account with this email already exists; log in instead.");
    expect(await api.database.db.prisma.organization.count({ where: { name: "Second" } })).toBe(0);
  });

  it("applies the password rules of signup", async () => {
    const result = await run(["--email", uniqueEmail(), "--org", "Weak"], { ORG_CREATE_PASSWORD: "too short pw" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe("The password must be at least 15 characters long.");
    const tooLong = await run(["--email", uniqueEmail(), "--org", "Weak"], { ORG_CREATE_PASSWORD: "p".repeat(73) });
    expect(tooLong.stderr.trim()).toBe("The password must be at most 72 bytes long (it is 73 bytes in UTF-8).");
  });

  it("refuses a malformed email", async () => {
    const result = await run(["--email", "not-an-email", "--org", "Bad"], { ORG_CREATE_PASSWORD: PASSWORD });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--email must be a valid email");
  });

  it("says how to pass the password when there is no terminal and no ORG_CREATE_PASSWORD", async () => {
    const result = await run(["--email", uniqueEmail(), "--org", "Headless"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe("No terminal to ask for the password on: set ORG_CREATE_PASSWORD.");
  });

  it("prints the usage for missing or unknown arguments", async () => {
    for (const args of [
      ["--org", "No email"],
      ["--email", "a@b.test", "--org", "X", "--role", "admin"],
    ]) {
      const result = await run(args, { ORG_CREATE_PASSWORD: PASSWORD });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("Usage: npm run org:create -- --email <owner email> --org <organization name>");
    }
  });

  it("stops with the variable's name when the configuration is invalid", async () => {
    const result = await run(["--email", uniqueEmail(), "--org", "Misconfigured"], { ORG_CREATE_PASSWORD: PASSWORD, BCRYPT_COST: "99" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Invalid configuration: BCRYPT_COST/);
  });
});
