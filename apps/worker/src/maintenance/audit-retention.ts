// Audit retention (docs/reference/tenants.md#audit-log), run by the leader like job retention and paced the same way: entries older than
// AUDIT_RETENTION_DAYS go. A month partition goes whole once the whole month is past the cut-off
// (docs/reference/time.md#partitions-and-retention); entries in the DEFAULT partition are deleted, a small batch per
// transaction — the only deletion the audit log's trigger allows.
import { AUDIT_LOG_PARTITIONS, deleteAuditEntriesBefore } from "@conveyor/db";
import { Retention } from "./retention";

export class AuditRetention extends Retention {
  override readonly name = "audit-retention";
  protected override readonly partitioned = AUDIT_LOG_PARTITIONS;
  protected override readonly noun = "audit entries";

  protected override deleteBatch(before: Date, limit: number): Promise<number> {
    return deleteAuditEntriesBefore(this.options.pool, { before, limit });
  }
}
