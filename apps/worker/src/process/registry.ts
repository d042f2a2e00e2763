// This worker's row in the worker registry (issue 38; packages/db/src/workers.ts), for the console's Workers view:
// registered at start, then a timer reads the envelope workers' counters and writes them in one small UPDATE every
// `heartbeatMs` — the jobs themselves never wait on it. A heartbeat that finds its row gone (reaped while this
// process was silent, e.g. paused or cut off) registers again. On a graceful stop the row is deleted.
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { heartbeatWorker, newId, registerWorker, unregisterWorker, type WorkerRegistration } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";

/** What the heartbeat reads: the jobs running now. */
export type BusySource = () => { count: number; jobIds: string[] };

export type RegistryOptions = {
  pool: pg.Pool;
  logger: Logger;
  types: readonly string[];
  /** WORKER_CONCURRENCY (per type). */
  concurrency: number;
  /** WORKER_HEARTBEAT_MS. */
  heartbeatMs: number;
  busy: BusySource;
};

/** The worker's release: apps/worker's package version. */
function workerVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

export class WorkerRegistry {
  readonly id = newId();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private failures = 0;
  private readonly registration: WorkerRegistration;

  constructor(private readonly options: RegistryOptions) {
    this.registration = {
      id: this.id,
      host: os.hostname(),
      pid: process.pid,
      version: workerVersion(),
      nodeVersion: process.version,
      types: options.types,
      concurrency: options.concurrency,
      heartbeatMs: options.heartbeatMs,
    };
  }

  /** Registers (a failure is logged, not fatal: the next heartbeat registers) and starts the heartbeat. */
  async start(): Promise<void> {
    await registerWorker(this.options.pool, this.registration).catch((error: Error) => this.warn(error));
    this.timer = setInterval(() => {
      // One heartbeat at a time: a slow database skips beats rather than piling them up.
      this.beating ??= this.beat().finally(() => (this.beating = undefined));
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const busy = this.options.busy();
    try {
      if (!(await heartbeatWorker(this.options.pool, this.id, busy))) await registerWorker(this.options.pool, this.registration, busy);
      this.failures = 0;
    } catch (error) {
      this.warn(error as Error);
    }
  }

  /** Warns on the first failure of a run and every 20th after it: a database outage is one line, not one per beat. */
  private warn(error: Error): void {
    if (this.failures++ % 20 === 0) this.options.logger.warn(`could not write this worker's heartbeat to the worker registry: ${error.message}`);
  }

  /**
   * Stops the heartbeat and leaves the registry — waiting at most `timeoutMs`, so a database that is away does not hold
   * up the exit (the row is then shown gone after three heartbeats, and reaped like a killed worker's).
   */
  async stop(timeoutMs = 3_000): Promise<void> {
    clearInterval(this.timer);
    const leave = async () => {
      await this.beating;
      await unregisterWorker(this.options.pool, this.id);
    };
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref());
    await Promise.race([leave(), timeout]).catch((error: Error) =>
      this.options.logger.warn(`could not remove this worker from the worker registry (it shows as gone until reaped): ${error.message}`),
    );
  }
}
