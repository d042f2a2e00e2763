import { PermanentJobError, type AiSummarizePayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function aiSummarizeHandler(_deps: HandlerDeps): JobHandler<AiSummarizePayload> {
  return async () => {
    throw new PermanentJobError("ai_summarize is not implemented in this build");
  };
}
