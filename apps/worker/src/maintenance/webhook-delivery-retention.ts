// Webhook delivery records (docs/reference/events.md#events: the last deliveries of each endpoint, shown by the API) are trimmed by the
// leader: records older than JOB_RETENTION_DAYS go — a day partition whole once the whole day is past the cut-off
// (docs/reference/time.md#partitions-and-retention), the DEFAULT partition's records a small batch per statement.
// The internal jobs that made them follow job retention; the records have no foreign key to them and go on their own.
import { deleteWebhookDeliveriesBefore, WEBHOOK_DELIVERY_PARTITIONS } from "@conveyor/db";
import { Retention } from "./retention";

export class WebhookDeliveryRetention extends Retention {
  override readonly name = "webhook-delivery-retention";
  protected override readonly partitioned = WEBHOOK_DELIVERY_PARTITIONS;
  protected override readonly noun = "webhook delivery record(s)";

  protected override deleteBatch(before: Date, limit: number): Promise<number> {
    return deleteWebhookDeliveriesBefore(this.options.pool, { before, limit });
  }
}
