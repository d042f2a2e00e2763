// Puts jobs on their type's BullMQ queue. The BullMQ job id is the Postgres job id, so adding a job that
// is already queued is a no-op, and the job's data stays in Postgres: RedisClient carries only the id. Only the
// dispatcher (and the reconciler, for running jobs Redis lost) adds jobs: which job runs next, when, and how
// often it is retried are Postgres' decisions, so BullMQ runs each hand-over once, with no delay and no retry.
import { Queue } from "bullmq";
import { queueName } from "@conveyor/contracts";
import type { RedisClient } from "./redis";

/** The Redis key of a queued job's hash (BullMQ's layout): it exists while the job is waiting, delayed or active. */
export function jobKey(prefix: string, type: string, id: string): string {
  return `${prefix}:${queueName(type)}:${id}`;
}

export type EnqueueRequest = { id: string; type: string };

export type JobQueuesOptions = {
  connection: RedisClient;
  /** Key prefix for every queue (REDIS_PREFIX). */
  prefix: string;
};

export class JobQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly options: JobQueuesOptions) {}

  /** The queue of `type`, created on first use and kept. */
  queue(type: string): Queue {
    let queue = this.queues.get(type);
    if (!queue) {
      queue = new Queue(queueName(type), { connection: this.options.connection, prefix: this.options.prefix });
      // Errors surface through the calls that failed; an unhandled 'error' event must not crash the process.
      queue.on("error", () => {});
      this.queues.set(type, queue);
    }
    return queue;
  }

  /** Adds the jobs, one pipelined bulk add per type. Rejects if Redis does not take them. */
  async enqueue(jobs: readonly EnqueueRequest[]): Promise<void> {
    const byType = new Map<string, EnqueueRequest[]>();
    for (const job of jobs) {
      const list = byType.get(job.type);
      if (list) list.push(job);
      else byType.set(job.type, [job]);
    }
    await Promise.all(
      [...byType].map(([type, list]) =>
        this.queue(type).addBulk(
          list.map((job) => ({
            name: type,
            data: {},
            opts: { jobId: job.id, attempts: 1, removeOnComplete: true, removeOnFail: true },
          })),
        ),
      ),
    );
  }

  /** Takes a job off its queue if it is still waiting there (a cancelled job); false when it was not waiting. */
  async remove(type: string, id: string): Promise<boolean> {
    return (await this.queue(type).remove(id)) === 1;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
