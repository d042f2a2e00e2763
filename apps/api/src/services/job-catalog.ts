// Which job types the API accepts and what their payloads must look like: the built-in catalog from
// @conveyor/contracts, plus plugin types that workers registered in Postgres (cached briefly).
import { readdirSync } from "node:fs";
import {
  BUILT_IN_TEMPLATES,
  BUILT_IN_TYPES,
  isBuiltInType,
  templateNamesFromFiles,
  validatePayload,
  type CatalogOptions,
  type ValidationDetail,
} from "@conveyor/contracts";
import { listRegisteredTypes } from "@conveyor/db";
import type { AppDeps } from "../context";
import { AppError } from "../http/errors";

const REGISTERED_TYPES_TTL_MS = 5_000;

/** Template names in TEMPLATES_DIR (`<name>.hbs`); none when it is unset or unreadable. */
function templatesIn(dir: string | undefined): string[] {
  if (!dir) return [];
  try {
    return templateNamesFromFiles(readdirSync(dir));
  } catch {
    return [];
  }
}

/** The payload rules this API applies (URL policy, template names); the OpenAPI document shows the same. */
export function catalogOptions(config: Pick<AppDeps["config"], "templatesDir" | "urlPolicy">): CatalogOptions {
  return { ...config.urlPolicy, templateNames: [...new Set([...BUILT_IN_TEMPLATES, ...templatesIn(config.templatesDir)])] };
}

export type JobCatalog = {
  /** Throws 400 unknown_job_type unless `type` is built in or registered. */
  assertKnownType(type: string): Promise<void>;
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
    async assertKnownType(type) {
      if (isBuiltInType(type)) return;
      if ((await registeredTypes(false)).has(type)) return;
      // A worker may have registered it a moment ago.
      const types = await registeredTypes(true);
      if (types.has(type)) return;
      const known = [...BUILT_IN_TYPES, ...types].join(", ");
      throw new AppError("unknown_job_type", `Unknown job type "${type}". Known types: ${known}.`, [{ path: "type", message: "is not a known job type" }]);
    },
    checkPayload(type, payload) {
      if (!isBuiltInType(type)) return { ok: true, value: payload };
      return validatePayload(type, payload, options) as ReturnType<JobCatalog["checkPayload"]>;
    },
  };
}
