// Schedule run records (docs/reference/time.md#alerts: which tick has its job, what makes a backfill idempotent) are trimmed by the leader
// like finished jobs: a run of a tick more than JOB_RETENTION_DAYS ago goes, a small batch per statement, paced the
// same way (packages/db/src/schedules/backfill.ts).
import { deleteScheduleRunsBefore } from "@conveyor/db";
import { Retention } from "./retention";

export class ScheduleRunRetention extends Retention {
  override readonly name = "schedule-run-retention";
  protected override readonly noun = "schedule run record(s)";

  protected override deleteBatch(before: Date, limit: number): Promise<number> {
    return deleteScheduleRunsBefore(this.options.pool, { before, limit });
  }
}
