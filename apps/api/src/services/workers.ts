// The Workers view's service (issue 38): the deployment's worker processes from the worker registry in Postgres, as
// the caller's organization may see them — its own running jobs by id, everyone else's work as a count of busy slots.
// Read from the primary: a replica's lag would show live workers as gone.
import { listWorkers, type WorkerView } from "@conveyor/db";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export async function getWorkers(options: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<WorkerView[]> {
  return listWorkers(deps.db.pool, options.caller.orgId);
}
