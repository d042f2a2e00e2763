import { PermanentJobError, type SendSmsPayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function sendSmsHandler(_deps: HandlerDeps): JobHandler<SendSmsPayload> {
  return async () => {
    throw new PermanentJobError("send_sms is not implemented in this build");
  };
}
