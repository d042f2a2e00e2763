// Puts envelopes on their type's BullMQ queue (docs/reference/lifecycle.md#envelopes). An envelope is one BullMQ job carrying 1 to ENVELOPE_MAX
// Postgres job ids of one type; its BullMQ job id is the envelope's own id, so adding an envelope that is already
// queued is a no-op, and the jobs' data stays in Postgres: Redis carries only ids. Only the dispatcher (and the
// reconciler, for running jobs Redis lost) adds envelopes: which job runs next, when, and how often it is retried
// are Postgres' decisions, so BullMQ runs each envelope once, with no delay and no retry.
import { Queue } from "bullmq";
import { queueName } from "@conveyor/contracts";
import type { RedisClient } from "./redis";

/** The Redis key of a queued envelope's hash (BullMQ's layout): it exists while the envelope is waiting or active. */
export function envelopeKey(prefix: string, type: string, envelopeId: string): string {
  return `${prefix}:${queueName(type)}:${envelopeId}`;
}

/** One trip through BullMQ: the ids of jobs of one type, in the order they should start. */
export type Envelope = { id: string; type: string; jobIds: readonly string[] };

/** What a BullMQ job of ours carries. */
export type EnvelopeData = { ids: string[] };

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

  /** Adds the envelopes, one pipelined bulk add per type. Rejects if Redis does not take them. */
  async enqueue(envelopes: readonly Envelope[]): Promise<void> {
    const byType = new Map<string, Envelope[]>();
    for (const envelope of envelopes) {
      const list = byType.get(envelope.type);
      if (list) list.push(envelope);
      else byType.set(envelope.type, [envelope]);
    }
    await Promise.all(
      [...byType].map(([type, list]) =>
        this.queue(type).addBulk(
          list.map((envelope) => ({
            name: type,
            data: { ids: [...envelope.jobIds] } satisfies EnvelopeData,
            opts: { jobId: envelope.id, attempts: 1, removeOnComplete: true, removeOnFail: true },
          })),
        ),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
