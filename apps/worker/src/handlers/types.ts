import type { Logger } from "@conveyor/logger";
import type { WorkerConfig } from "../env";

/** What every built-in handler factory receives from the worker. */
export type HandlerDeps = {
  /** The worker's configuration: handlers read their variables (handlers/settings.ts) and the shared ones they need. */
  settings: WorkerConfig;
  /** Process logger, for operator-facing lines; job-facing lines go through ctx.log. */
  logger: Logger;
  /** Where mobile_money_stk keeps its pushes (`stkPushStore(db.pool)` from @conveyor/db); without it that type fails permanently. */
  stkPushes?: StkPushStore;
};

/**
 * What mobile_money_stk remembers about a job's STK push across attempts. A push is not idempotent, so a retried
 * attempt must know whether an earlier one may already have prompted the payer.
 */
export type StkPushStore = {
  find(jobId: string): Promise<{ checkoutRequestId: string | null; merchantRequestId: string | null; pushStartedAt: Date | null } | null>;
  /** Claims the push and stores the callback secret's hash; false when another attempt already pushed. */
  beginPush(jobId: string, secretHash: Buffer): Promise<boolean>;
  pushAccepted(jobId: string, ids: { checkoutRequestId: string; merchantRequestId: string }): Promise<void>;
  /** Daraja refused the push before processing it: a later attempt may push again. */
  pushRefused(jobId: string): Promise<void>;
};
