// Creates an organization and its owner from the command line, for operators (docs/reference/tenants.md#authentication), with the same
// configuration and the same service as POST /auth/signup (it works with ALLOW_SIGNUP=false).
//
//   npm run org:create -- --email ada@example.com --org "Acme"
//
// The password is read from ORG_CREATE_PASSWORD when set (scripts, containers), otherwise asked for twice
// on the terminal without echo. It is never printed.
import { parseArgs } from "node:util";
import { loadDotEnv, runMain, StartupError } from "@conveyor/config";
import { connectDatabase } from "@conveyor/db";
import { systemClock } from "../context";
import { loadApiConfig } from "../env";
import { AppError } from "../services/infrastructure/errors";
import { createOrganization } from "../services/accounts";
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_CHARACTERS, passwordProblem } from "../services/infrastructure/passwords";

/** The environment variable that carries the owner's password when there is no terminal to ask on. */
export const PASSWORD_VARIABLE = "ORG_CREATE_PASSWORD";

const USAGE = `Usage: npm run org:create -- --email <owner email> --org <organization name>
The owner's password (${PASSWORD_MIN_CHARACTERS} characters to ${PASSWORD_MAX_BYTES} bytes) is read from ${PASSWORD_VARIABLE}, or asked for on the terminal.`;

/** Reads one line from the terminal without echoing it. */
function readHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (settle: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      settle();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return finish(() => resolve(value));
        if (ch === "\u0003" || ch === "\u0004") return finish(() => reject(new StartupError("Cancelled.")));
        if (ch === "\u007f" || ch === "\b") value = [...value].slice(0, -1).join("");
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

async function readPassword(): Promise<string> {
  const fromEnv = process.env[PASSWORD_VARIABLE];
  if (fromEnv) return checked(fromEnv);
  if (!process.stdin.isTTY) throw new StartupError(`No terminal to ask for the password on: set ${PASSWORD_VARIABLE}.`);
  const password = checked(await readHidden(`Password for the owner (${PASSWORD_MIN_CHARACTERS}+ characters): `));
  if ((await readHidden("Repeat the password: ")) !== password) throw new StartupError("The passwords do not match.");
  return password;
}

function checked(password: string): string {
  const problem = passwordProblem(password);
  if (problem) throw new StartupError(`The password ${problem}.`);
  return password;
}

async function main(): Promise<void> {
  let values: { email?: string; org?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { email: { type: "string" }, org: { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true }));
  } catch (error) {
    throw new StartupError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!values.email || !values.org) throw new StartupError(USAGE);

  loadDotEnv();
  const config = loadApiConfig(process.env);
  const password = await readPassword();
  const db = await connectDatabase({ url: config.DATABASE_URL, directUrl: config.DATABASE_DIRECT_URL, poolSize: 2, applicationName: "conveyor-org-create" });
  try {
    const { user, org } = await createOrganization({ email: values.email, password, orgName: values.org }, { db, config, clock: systemClock });
    process.stdout.write(`Created organization "${org.name}" (${org.id}) with owner ${user.email} (${user.id}).\nLog in with POST /auth/login.\n`);
  } catch (error) {
    if (error instanceof AppError) {
      const details =
        error.details?.map((d) => ` ${d.path === "org_name" ? "--org" : d.path === "email" ? "--email" : "password"} ${d.message}.`).join("") ?? "";
      throw new StartupError(`${error.message}${details}`);
    }
    throw error;
  } finally {
    await db.close();
  }
}

runMain(main);
