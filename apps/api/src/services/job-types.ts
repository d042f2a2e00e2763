// Organization job types (docs/reference/lifecycle.md#your-own-workers): owners and admins register a type with a JSON Schema for its payloads; POST
// /jobs then accepts it from that organization (validated against the schema) and the worker protocol leases its jobs
// to that organization's workers only. A name may not be a built-in or plugin type's. Each change is audited.
import { isBuiltInType } from "@conveyor/contracts";
import {
  deleteOrgJobType,
  findOrgJobType,
  inTransaction,
  insertOrgJobType,
  listOrgJobTypes,
  listRegisteredTypes,
  updateOrgJobType,
  type OrgJobType,
  type OrgJobTypeChange,
} from "@conveyor/db";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import { audit, changedFields } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { checkPayloadSchema } from "./infrastructure/job-type-schemas";

export type JobTypeInput = {
  name: string;
  payload_schema: Record<string, unknown>;
  description?: string | null;
  default_max_retries?: number | null;
  default_timeout_ms?: number | null;
};
export type JobTypeChangeInput = Partial<Omit<JobTypeInput, "name">>;

type Deps = Pick<ServiceDeps, "db" | "clock" | "catalog">;

function checkSchema(schema: unknown): void {
  const problems = checkPayloadSchema(schema);
  if (problems.length) throw validationFailed(problems);
}

/** What the audit log keeps of a type: never the schema itself (it may be large), only whether it changed. */
const audited = (t: OrgJobType) => ({
  description: t.description,
  default_max_retries: t.default_max_retries,
  default_timeout_ms: t.default_timeout_ms,
  payload_schema_updated_at: t.updated_at,
});

export async function createJobType(options: { caller: Caller; input: JobTypeInput }, deps: Deps): Promise<OrgJobType> {
  const { caller, input } = options;
  checkSchema(input.payload_schema);
  if (isBuiltInType(input.name) || (await listRegisteredTypes(deps.db.pool)).includes(input.name)) {
    throw new AppError("job_type_taken", `"${input.name}" is a built-in or plugin job type; choose another name.`, [
      { path: "name", message: "is a built-in or plugin job type" },
    ]);
  }
  const created = await inTransaction(deps.db.pool, async (tx) => {
    const row = await insertOrgJobType(tx, {
      orgId: caller.orgId,
      name: input.name,
      description: input.description ?? null,
      payloadSchema: input.payload_schema,
      defaultMaxRetries: input.default_max_retries ?? null,
      defaultTimeoutMs: input.default_timeout_ms ?? null,
    });
    if (!row) return null;
    await audit(tx, caller, deps.clock, {
      action: "job_type.create",
      target: { type: "job_type", id: null, label: input.name },
      changes: changedFields({}, audited(row)),
    });
    return row;
  });
  if (!created) throw new AppError("job_type_taken", `Your organization already has a job type "${input.name}".`, [{ path: "name", message: "is taken" }]);
  deps.catalog.forgetOrgTypes(caller.orgId);
  return created;
}

export async function listJobTypes(options: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<OrgJobType[]> {
  return listOrgJobTypes(deps.db.pool, options.caller.orgId);
}

export async function getJobType(options: { caller: Caller; name: string }, deps: Pick<ServiceDeps, "db">): Promise<OrgJobType> {
  const found = await findOrgJobType(deps.db.pool, options.caller.orgId, options.name);
  if (!found) throw notFound("Job type");
  return found;
}

export async function updateJobType(options: { caller: Caller; name: string; change: JobTypeChangeInput }, deps: Deps): Promise<OrgJobType> {
  const { caller, name, change } = options;
  if (change.payload_schema !== undefined) checkSchema(change.payload_schema);
  const wanted: OrgJobTypeChange = {
    description: change.description,
    payloadSchema: change.payload_schema,
    defaultMaxRetries: change.default_max_retries,
    defaultTimeoutMs: change.default_timeout_ms,
  };
  const updated = await inTransaction(deps.db.pool, async (tx) => {
    const result = await updateOrgJobType(tx, caller.orgId, name, wanted);
    if (!result) return null;
    await audit(tx, caller, deps.clock, {
      action: "job_type.update",
      target: { type: "job_type", id: null, label: name },
      changes: changedFields(
        audited(result.before),
        change.payload_schema === undefined ? { ...audited(result.after), payload_schema_updated_at: result.before.updated_at } : audited(result.after),
      ),
    });
    return result.after;
  });
  if (!updated) throw notFound("Job type");
  deps.catalog.forgetOrgTypes(caller.orgId);
  return updated;
}

/** Deletes a type: new jobs of it are refused; its jobs already accepted still run on the organization's workers. */
export async function deleteJobType(options: { caller: Caller; name: string }, deps: Deps): Promise<void> {
  const { caller, name } = options;
  const deleted = await inTransaction(deps.db.pool, async (tx) => {
    const gone = await deleteOrgJobType(tx, caller.orgId, name);
    if (gone) await audit(tx, caller, deps.clock, { action: "job_type.delete", target: { type: "job_type", id: null, label: name } });
    return gone;
  });
  if (!deleted) throw notFound("Job type");
  deps.catalog.forgetOrgTypes(caller.orgId);
}
