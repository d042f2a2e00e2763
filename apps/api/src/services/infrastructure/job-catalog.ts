// Which job types the API accepts and what their payloads must look like: the built-in catalog from
// @conveyor/contracts, plus plugin types that workers registered in Postgres (cached briefly).
import { templateNames, urlPolicy } from "@conveyor/config";
import { BUILT_IN_TYPES, isBuiltInType, validatePayload, type CatalogOptions, type ValidationDetail } from "@conveyor/contracts";
import { listRegisteredTypes } from "@conveyor/db";
import type { AppDeps } from "../../context";
import { AppError, type ErrorDetail } from "./errors";

const REGISTERED_TYPES_TTL_MS = 5_000;

/**
 * The payload rules this API applies (URL policy, template names); the OpenAPI document shows the same. An
 * unreadable TEMPLATES_DIR stops the API at start, as it stops the worker.
 */
export function catalogOptions(config: Pick<AppDeps["config"], "TEMPLATES_DIR" | "WEBHOOK_ALLOW_HTTP" | "ALLOW_PRIVATE_NETWORK">): CatalogOptions {
  return { ...urlPolicy(config), templateNames: templateNames(config.TEMPLATES_DIR) };
}

export type JobCatalog = {
  /** Whether `type` is built in or registered by a worker (re-read at once when it seems unknown). */
  isKnownType(type: string): Promise<boolean>;
  /** Every type the API accepts now, built-in ones first. */
  knownTypes(): Promise<string[]>;
  /** The payload with defaults applied, or validation details (paths relative to the payload). */
  checkPayload(type: string, payload: Record<string, unknown>): { ok: true; value: Record<string, unknown> } | { ok: false; details: ValidationDetail[] };
};

export function createJobCatalog({ config, db }: Pick<AppDeps, "config" | "db">): JobCatalog {
  const options = catalogOptions(config);
  let registered: { types: Set<string>; until: number } = { types: new Set(), until: 0 };

  async function registeredTypes(force: boolean): Promise<Set<string>> {
    if (force || registered.until < Date.now()) {
      registered = { types: new Set(await listRegisteredTypes(db.pool)), until: Date.now() + REGISTERED_TYPES_TTL_MS };
    }
    return registered.types;
  }

  return {
    async isKnownType(type) {
      if (isBuiltInType(type)) return true;
      if ((await registeredTypes(false)).has(type)) return true;
      // A worker may have registered it a moment ago.
      return (await registeredTypes(true)).has(type);
    },
    async knownTypes() {
      return [...BUILT_IN_TYPES, ...(await registeredTypes(false))];
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
export async function checkJob(catalog: JobCatalog, type: string, payload: Record<string, unknown>, payloadPath: string): Promise<CheckedJob> {
  if (!(await catalog.isKnownType(type))) return { ok: false, unknownType: true };
  const checked = catalog.checkPayload(type, payload);
  if (!checked.ok) return { ok: false, unknownType: false, details: checked.details.map((d) => ({ path: `${payloadPath}.${d.path}`, message: d.message })) };
  return { ok: true, payload: checked.value };
}

/** 400 unknown_job_type, listing the types the API knows now; `lead` replaces the sentence naming the type. */
export async function unknownJobType(catalog: JobCatalog, type: string, details: ErrorDetail[] = [], lead = `Unknown job type "${type}".`): Promise<AppError> {
  const known = (await catalog.knownTypes()).join(", ");
  return new AppError("unknown_job_type", `${lead} Known types: ${known}.`, details.length ? details : undefined);
}
