// Sets an organization's quotas (docs/reference/tenants.md#usage-quotas-and-backpressure), for the deployment's operator only: no HTTP endpoint changes quotas.
//
//   npm run org:quota -- <org id> --jobs-per-day=1000 --jobs-per-month=20000 --pending-max=500 --payload-bytes-max=10000000
//
// A number sets that quota for the organization (0: unlimited, whatever the QUOTA_* default); `default` clears it back
// to the deployment's default. With no quota option it prints what is in force. Each change is an audit log entry
// (actor: system, action org.quota_update) in the transaction that makes it.
import { parseArgs } from "node:util";
import { loadDotEnv, quotaDefaults, runMain, StartupError } from "@conveyor/config";
import {
  connectDatabase,
  findQuotaOverrides,
  inTransaction,
  isUuid,
  limitsInForce,
  putQuotaOverrides,
  QUOTA_NAMES,
  writeAuditEntry,
  type QuotaName,
  type QuotaOverrides,
} from "@conveyor/db";
import { loadApiConfig } from "../env";

const OPTION_OF = (name: QuotaName) => name.replaceAll("_", "-");

const USAGE = `Usage: npm run org:quota -- <organization id> [${QUOTA_NAMES.map((n) => `--${OPTION_OF(n)}=<n|0|default>`).join(" ")}]
A number sets the organization's quota (0: unlimited for it); "default" goes back to the QUOTA_* setting. No option: show the quotas in force.`;

/** An option's value: a whole number ≥ 0, or "default" (null). */
export function parseQuotaValue(option: string, value: string): number | null {
  if (value === "default") return null;
  if (!/^\d{1,15}$/.test(value)) throw new StartupError(`--${option} must be a whole number (0 = unlimited) or "default", not "${value}".\n${USAGE}`);
  return Number(value);
}

const show = (limit: number | null) => (limit === null ? "unlimited" : String(limit));

function parseOptions() {
  try {
    return parseArgs({
      options: { ...Object.fromEntries(QUOTA_NAMES.map((n) => [OPTION_OF(n), { type: "string" as const }])), help: { type: "boolean" as const, short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new StartupError(`${(error as Error).message}\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const parsed = parseOptions();
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [orgId, ...extra] = parsed.positionals;
  if (!orgId || extra.length || !isUuid(orgId)) throw new StartupError(USAGE);
  const changes: Partial<QuotaOverrides> = {};
  for (const name of QUOTA_NAMES) {
    const value = (parsed.values as Record<string, string | boolean | undefined>)[OPTION_OF(name)];
    if (typeof value === "string") changes[name] = parseQuotaValue(OPTION_OF(name), value);
  }

  loadDotEnv();
  const config = loadApiConfig(process.env);
  const db = await connectDatabase({ url: config.DATABASE_URL, poolSize: 2, applicationName: "conveyor-org-quota" });
  try {
    const before = (await findQuotaOverrides(db.pool, [orgId])).get(orgId) ?? null;
    const { rows } = await db.pool.query("SELECT name FROM organizations WHERE id = $1", [orgId]);
    if (!rows[0]) throw new StartupError(`No organization has the id ${orgId}.`);
    let own = before;
    if (Object.keys(changes).length) {
      own = await inTransaction(db.pool, async (tx) => {
        const after = await putQuotaOverrides(tx, orgId, changes);
        const changed = Object.fromEntries(
          QUOTA_NAMES.filter((n) => n in changes && (before?.[n] ?? null) !== after[n]).map((n) => [n, { before: before?.[n] ?? null, after: after[n] }]),
        );
        if (Object.keys(changed).length) {
          await writeAuditEntry(tx, {
            orgId,
            at: new Date(),
            actor: { type: "system", id: null, label: "npm run org:quota" },
            action: "org.quota_update",
            target: { type: "organization", id: orgId, label: (rows[0] as { name: string }).name },
            request: { ip: null, userAgent: null, requestId: null },
            changes: changed,
          });
        }
        return after;
      });
    }
    const limits = limitsInForce(quotaDefaults(config), own);
    const lines = QUOTA_NAMES.map((n) => `  ${OPTION_OF(n)}: ${show(limits[n])}${own?.[n] != null ? " (this organization's)" : " (default)"}`);
    process.stdout.write(`Quotas in force for ${orgId}:\n${lines.join("\n")}\n`);
  } finally {
    await db.close();
  }
}

runMain(main);
