import { PermanentJobError, type MobileMoneyStkPayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function mobileMoneyStkHandler(_deps: HandlerDeps): JobHandler<MobileMoneyStkPayload> {
  return async () => {
    throw new PermanentJobError("mobile_money_stk is not implemented in this build");
  };
}
