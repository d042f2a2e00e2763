import { PermanentJobError, type WebhookPayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function webhookHandler(_deps: HandlerDeps): JobHandler<WebhookPayload> {
  return async () => {
    throw new PermanentJobError("webhook is not implemented in this build");
  };
}
