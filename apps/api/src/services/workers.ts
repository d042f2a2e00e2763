// The Workers view's service (issue 38): the deployment's worker processes from the worker registry in Postgres, as
// the caller's organization may see them — its own running jobs by id, everyone else's work as a count of busy slots.
// Read from the primary: a replica's lag would show live workers as gone.
import { listProtocolWorkers, listWorkers, reapProtocolWorkers, type WorkerView } from "@conveyor/db";

/** A protocol worker silent this long leaves the list (as the deployment's gone workers do). */
const PROTOCOL_WORKER_GONE_MS = 15 * 60_000;
import type { Caller, ServiceDeps } from "./deps";

/** The deployment's workers, then the organization's own protocol workers (SPEC §26), which no other organization sees. */
export async function getWorkers(options: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<WorkerView[]> {
  await reapProtocolWorkers(deps.db.pool, PROTOCOL_WORKER_GONE_MS);
  const [deployment, own] = await Promise.all([listWorkers(deps.db.pool, options.caller.orgId), listProtocolWorkers(deps.db.pool, options.caller.orgId)]);
  return [...deployment, ...own];
}
