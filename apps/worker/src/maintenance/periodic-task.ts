// The shape of the leader's small upkeep duties (key expiry, the usage fold, the worker reaper): one round every
// `everyMs` while leading, started at once; a failed round is logged and the next one tries again.
import type { Logger } from "@conveyor/logger";
import { WakeLoop } from "@conveyor/queue";
import type { LeaderTask } from "../leadership/leadership";

export abstract class PeriodicTask implements LeaderTask {
  abstract readonly name: string;
  protected readonly loop: WakeLoop;

  /** `what` names the duty in the warning of a failed round ("key expiry failed; …"). */
  constructor(logger: Logger, everyMs: number, what: string) {
    this.loop = new WakeLoop({
      round: async () => void (await this.round()),
      everyMs,
      quietMs: 0,
      warn: (error) => logger.warn(`${what} failed; trying again in the next round: ${error.message}`),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One round of the duty. */
  protected abstract round(): Promise<unknown>;
}
