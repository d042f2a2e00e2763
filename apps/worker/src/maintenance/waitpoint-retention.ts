// Waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps) are trimmed by the leader like finished jobs: a waitpoint that ended (completed, expired,
// cancelled) more than JOB_RETENTION_DAYS ago goes with its events, a small batch per statement, paced the same way,
// unless a job still there depends on it (packages/db retention.ts); that job's own retention frees it.
import { deleteEndedWaitpoints } from "@conveyor/db";
import { Retention } from "./retention";

export class WaitpointRetention extends Retention {
  override readonly name = "waitpoint-retention";
  protected override readonly noun = "waitpoint(s) ended";

  protected override deleteBatch(before: Date, limit: number): Promise<number> {
    return deleteEndedWaitpoints(this.options.pool, { before, limit });
  }
}
