import { PermanentJobError, type SendEmailPayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function sendEmailHandler(_deps: HandlerDeps): JobHandler<SendEmailPayload> {
  return async () => {
    throw new PermanentJobError("send_email is not implemented in this build");
  };
}
