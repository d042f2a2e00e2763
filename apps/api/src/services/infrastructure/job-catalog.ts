// Which job types the API accepts and what their payloads must look like: the built-in catalog from
// @conveyor/contracts, plugin types that workers registered in Postgres, and each organization's own types (docs/reference/lifecycle.md#your-own-workers,
// validated by their JSON Schema) — the last two cached briefly.
import { templateNames, urlPolicy } from "@conveyor/config";
import { BUILT_IN_TYPES, isBuiltInType, validatePayload, type CatalogOptions, type ValidationDetail } from "@conveyor/contracts";
import { listOrgJobTypes, listRegisteredTypes, type OrgJobType } from "@conveyor/db";
import type { AppDeps } from "../../context";
import { AppError, type ErrorDetail } from "./errors";
import { validateWith, validatorFor } from "./job-type-schemas";

const REGISTERED_TYPES_TTL_MS = 5_000;
/** How long an organization's own types are cached (another API replica's change shows within this). */
const ORG_TYPES_TTL_MS = 5_000;
/** Organizations whose types are kept cached at once. */
const ORG_TYPES_CACHED = 10_000;

/**
 * The payload rules this API applies (URL policy, template names); the OpenAPI document shows the same. An
 * unreadable TEMPLATES_DIR stops the API at start, as it stops the worker.
 */
export function catalogOptions(config: Pick<AppDeps["config"], "TEMPLATES_DIR" | "WEBHOOK_ALLOW_HTTP" | "ALLOW_PRIVATE_NETWORK">): CatalogOptions {
  return { ...urlPolicy(config), templateNames: templateNames(config.TEMPLATES_DIR) };
}

export type JobCatalog = {
  /** Whether `type` is built in, registered by a worker, or `orgId`'s own (re-read at once when it seems unknown). */
  isKnownType(type: string, orgId?: string): Promise<boolean>;
  /** Every type the API accepts now, built-in ones first, then plugin types, then `orgId`'s own. */
  knownTypes(orgId?: string): Promise<string[]>;
  /** `orgId`'s own type of that name (docs/reference/lifecycle.md#your-own-workers), or undefined. */
  orgType(orgId: string, type: string): Promise<OrgJobType | undefined>;
  /** Drops `orgId`'s cached types (this replica changed them). */
  forgetOrgTypes(orgId: string): void;
  /** The payload with defaults applied, or validation details (paths relative to the payload). */
  checkPayload(type: string, payload: Record<string, unknown>): { ok: true; value: Record<string, unknown> } | { ok: false; details: ValidationDetail[] };
};

export function createJobCatalog({ config, db }: Pick<AppDeps, "config" | "db">): JobCatalog {
  const options = catalogOptions(config);
  let registered: { types: Set<string>; until: number } = { types: new Set(), until: 0 };
  const orgTypes = new Map<string, { types: Map<string, OrgJobType>; until: number }>();

  async function typesOf(orgId: string, force: boolean): Promise<Map<string, OrgJobType>> {
    const cached = orgTypes.get(orgId);
    if (!force && cached && cached.until > Date.now()) return cached.types;
    const types = new Map((await listOrgJobTypes(db.pool, orgId)).map((t) => [t.name, t]));
    if (orgTypes.size >= ORG_TYPES_CACHED) orgTypes.clear();
    orgTypes.set(orgId, { types, until: Date.now() + ORG_TYPES_TTL_MS });
    return types;
  }

  async function registeredTypes(force: boolean): Promise<Set<string>> {
    if (force || registered.until < Date.now()) {
      registered = { types: new Set(await listRegisteredTypes(db.pool)), until: Date.now() + REGISTERED_TYPES_TTL_MS };
    }
    return registered.types;
  }

  return {
    async isKnownType(type, orgId) {
      if (isBuiltInType(type)) return true;
      if ((await registeredTypes(false)).has(type)) return true;
      if (orgId !== undefined && (await typesOf(orgId, false)).has(type)) return true;
      // A worker may have registered it a moment ago.
      if ((await registeredTypes(true)).has(type)) return true;
      return orgId !== undefined && (await typesOf(orgId, true)).has(type);
    },
    async knownTypes(orgId) {
      const own = orgId === undefined ? [] : [...(await typesOf(orgId, false)).keys()];
      return [...new Set([...BUILT_IN_TYPES, ...(await registeredTypes(false)), ...own])];
    },
    async orgType(orgId, type) {
      if (isBuiltInType(type)) return undefined;
      // From the cache (isKnownType reads it again for a type it did not know): a plugin type costs no query here.
      return (await typesOf(orgId, false)).get(type);
    },
    forgetOrgTypes(orgId) {
      orgTypes.delete(orgId);
    },
    checkPayload(type, payload) {
      if (!isBuiltInType(type)) return { ok: true, value: payload };
      return validatePayload(type, payload, options) as ReturnType<JobCatalog["checkPayload"]>;
    },
  };
}

/** A job's type and payload as every way of making a job checks them (POST /jobs, a schedule's template, a replay). */
export type CheckedJob =
  { ok: true; payload: Record<string, unknown> } | { ok: false; unknownType: true } | { ok: false; unknownType: false; details: ErrorDetail[] };

/**
 * Whether `type` is known and `payload` fits it: the payload with its defaults applied, or what is wrong, with each
 * detail's path under `payloadPath` (e.g. "jobs[2].payload").
 */
export async function checkJob(catalog: JobCatalog, type: string, payload: Record<string, unknown>, payloadPath: string, orgId?: string): Promise<CheckedJob> {
  if (!(await catalog.isKnownType(type, orgId))) return { ok: false, unknownType: true };
  const own = orgId === undefined ? undefined : await catalog.orgType(orgId, type);
  if (own) {
    // The organization's own type (docs/reference/lifecycle.md#your-own-workers): its JSON Schema, compiled once per version of the type.
    const details = validateWith(validatorFor({ orgId: orgId!, name: type, version: own.updated_at }, own.payload_schema), payload, payloadPath);
    return details.length ? { ok: false, unknownType: false, details } : { ok: true, payload };
  }
  const checked = catalog.checkPayload(type, payload);
  if (!checked.ok) return { ok: false, unknownType: false, details: checked.details.map((d) => ({ path: `${payloadPath}.${d.path}`, message: d.message })) };
  return { ok: true, payload: checked.value };
}

/** 400 unknown_job_type, listing the types the API knows now; `lead` replaces the sentence naming the type. */
export async function unknownJobType(
  catalog: JobCatalog,
  type: string,
  details: ErrorDetail[] = [],
  lead = `Unknown job type "${type}".`,
  orgId?: string,
): Promise<AppError> {
  const known = (await catalog.knownTypes(orgId)).join(", ");
  return new AppError("unknown_job_type", `${lead} Known types: ${known}.`, details.length ? details : undefined);
}
