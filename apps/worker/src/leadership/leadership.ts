// One leader among the worker replicas for what only one may do at a time: dispatching, ticking schedules,
// relaying events, deleting old jobs. A Redis key with a short lease, renewed while held: a leader that dies
// (even SIGKILL) is replaced within one lease. Correctness never rests on there being one leader — every task
// takes its rows with row locks or SKIP LOCKED — so two leaders overlapping after a lease expiry cost work, not
// duplicates; the lease only keeps the work in one place.
import { randomUUID } from "node:crypto";
import type { Logger } from "@conveyor/logger";
import type { RedisClient } from "@conveyor/queue";

/** A task the leader runs: started when this process becomes leader, stopped when it stops being one. */
export type LeaderTask = { name: string; start(): Promise<void> | void; stop(): Promise<void> | void };

export type LeadershipOptions = {
  /** A fail-fast connection: a leader that cannot reach Redis must not believe it still leads. */
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  tasks: LeaderTask[];
  /** How long a lease lasts without renewal. Default 5 s. */
  leaseMs?: number;
  /** How often the lease is renewed, or taken when free. Default 1 s. */
  renewMs?: number;
};

const RENEW = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export class Leadership {
  private readonly token = randomUUID();
  private readonly key: string;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private turn: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeadershipOptions) {
    this.key = `${options.prefix}:leader`;
    this.leaseMs = options.leaseMs ?? 5_000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const renewMs = this.options.renewMs ?? 1_000;
    const tick = () => {
      this.turn = this.turn.then(() => this.step()).catch(() => {});
      this.timer = setTimeout(tick, renewMs);
    };
    tick();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.turn;
    if (this.leading) {
      await this.resign();
      await this.options.redis.eval(RELEASE, 1, this.key, this.token).catch(() => {});
    }
  }

  private async step(): Promise<void> {
    let held: boolean;
    try {
      held = this.leading
        ? (await this.options.redis.eval(RENEW, 1, this.key, this.token, String(this.leaseMs))) === 1
        : (await this.options.redis.set(this.key, this.token, "PX", this.leaseMs, "NX")) === "OK";
    } catch (error) {
      // Unreachable Redis: the lease will lapse, so stop acting as leader now rather than after it has.
      held = false;
      if (this.leading) this.options.logger.warn(`lost touch with Redis; no longer the leader: ${(error as Error).message}`);
    }
    if (held && !this.leading) await this.lead();
    else if (!held && this.leading) await this.resign();
  }

  private async lead(): Promise<void> {
    this.leading = true;
    this.options.logger.info(`became the leader: running ${this.options.tasks.map((t) => t.name).join(", ")}`);
    for (const task of this.options.tasks) {
      await Promise.resolve(task.start()).catch((error: Error) =>
        this.options.logger.error(`leader task ${task.name} did not start`, { error: error.message }),
      );
    }
  }

  private async resign(): Promise<void> {
    this.leading = false;
    for (const task of this.options.tasks) {
      await Promise.resolve(task.stop()).catch((error: Error) =>
        this.options.logger.warn(`leader task ${task.name} did not stop cleanly`, { error: error.message }),
      );
    }
    this.options.logger.info("no longer the leader");
  }
}
