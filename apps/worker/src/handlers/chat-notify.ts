import { PermanentJobError, type ChatNotifyPayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function chatNotifyHandler(_deps: HandlerDeps): JobHandler<ChatNotifyPayload> {
  return async () => {
    throw new PermanentJobError("chat_notify is not implemented in this build");
  };
}
