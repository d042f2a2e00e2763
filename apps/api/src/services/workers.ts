// The Workers view's service (issue 38, SPEC §27): the deployment's worker processes from the worker registry in
// Postgres, as the caller's organization may see them. On a shared deployment (the default) the deployment's workers
// are shown only as capacity for the types the organization uses — no host name, pid or version of the operator's
// machines reaches a tenant; with WORKERS_VISIBLE_TO_ORGS=true (a single-company deployment) every worker in full,
// with the organization's own running jobs by id and everyone else's work as a count of busy slots. Workers an
// organization runs itself (SPEC §26) are its own and always shown in full once the registry records an owner.
// Read from the primary: a replica's lag would show live workers as gone.
import { listWorkerCapacity, listWorkers, type WorkerCapacityView, type WorkerView } from "@conveyor/db";
import type { Caller, ServiceDeps } from "./deps";

export type WorkerListItem = (WorkerView & { kind: "worker" }) | WorkerCapacityView;

export async function getWorkers(options: { caller: Caller }, deps: Pick<ServiceDeps, "db" | "config">): Promise<WorkerListItem[]> {
  if (!deps.config.WORKERS_VISIBLE_TO_ORGS) return listWorkerCapacity(deps.db.pool, options.caller.orgId);
  return (await listWorkers(deps.db.pool, options.caller.orgId)).map((worker) => ({ kind: "worker" as const, ...worker }));
}
