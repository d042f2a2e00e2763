import type { Logger } from "@conveyor/logger";
import type { HandlerSettings } from "./settings";

/** What every built-in handler factory receives from the worker. */
export type HandlerDeps = {
  /** The worker's configuration: handlers read their variables (handlers/settings.ts) and the shared ones they need. */
  settings: HandlerSettings;
  /** Process logger, for operator-facing lines; job-facing lines go through ctx.log. */
  logger: Logger;
  /** Where mobile_money_stk makes its callback waitpoints (`stkCallbackStore(pool)` from @conveyor/db); without it that type fails permanently. */
  stkCallbacks?: StkCallbackStore;
};

/** The waitpoints an STK push's callback completes: one per push, made before the push is sent. */
export type StkCallbackStore = {
  /** A waiting waitpoint of the job whose token hash is the hash of the push's callback secret; its id. */
  createWaitpoint(w: { jobId: string; orgId: string; secretHash: Buffer; timeoutSeconds: number }): Promise<string>;
  /** Daraja refused the push: its callback will never come. */
  cancelWaitpoint(w: { orgId: string; jobId: string; waitpointId: string }): Promise<void>;
};
