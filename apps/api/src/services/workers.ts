// The Workers view's service (issue 38, docs/reference/time.md#alerts): the deployment's worker processes from the worker registry in
// Postgres, as the caller's organization may see them. On a shared deployment (the default) the deployment's workers
// are shown only as capacity for the types the organization uses — no host name, pid or version of the operator's
// machines reaches a tenant; with WORKERS_VISIBLE_TO_ORGS=true (a single-company deployment) every worker in full,
// with the organization's own running jobs by id and everyone else's work as a count of busy slots. Workers an
// organization runs itself (docs/reference/lifecycle.md#your-own-workers) are its own and always shown in full once the registry records an owner.
// Read from the primary: a replica's lag would show live workers as gone.
import { listProtocolWorkers, listWorkerCapacity, listWorkers, reapProtocolWorkers, type WorkerCapacityView, type WorkerView } from "@conveyor/db";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

/** A protocol worker silent this long leaves the list (as the deployment's gone workers do). */
const PROTOCOL_WORKER_GONE_MS = 15 * 60_000;

export type WorkerListItem = (WorkerView & { kind: "worker" }) | (WorkerView & { kind: "protocol"; name: string }) | WorkerCapacityView;

/** The deployment's workers (as capacity, or in full when the operator opts in), then the organization's own protocol
 * workers (docs/reference/lifecycle.md#your-own-workers), which no other organization sees. */
export async function getWorkers(options: { caller: Caller }, deps: Pick<ServiceDeps, "db" | "config">): Promise<WorkerListItem[]> {
  const { orgId } = options.caller;
  await reapProtocolWorkers(deps.db.pool, PROTOCOL_WORKER_GONE_MS);
  const [deployment, own] = await Promise.all([
    deps.config.WORKERS_VISIBLE_TO_ORGS
      ? listWorkers(deps.db.pool, orgId).then((workers) => workers.map((worker) => ({ kind: "worker" as const, ...worker })))
      : listWorkerCapacity(deps.db.pool, orgId),
    listProtocolWorkers(deps.db.pool, orgId),
  ]);
  return [...deployment, ...own];
}
