// Assembles the worker: one envelope worker (a BullMQ worker fetching envelopes of job ids) per served job type, the
// attempt wrapper around each handler, the batched bookkeeper, the cancellation watch, the reconciler, this worker's
// announced capacity, and its bid for leadership (the leader dispatches); and stops them in the right order on shutdown.
import { StartupError } from "@conveyor/config";
import {
  BUILT_IN_TYPES,
  isBuiltInType,
  validatePayload,
  PermanentJobError,
  type CatalogOptions,
  type JobPlugin,
  type TypeRateLimit,
} from "@conveyor/contracts";
import { orgTypesNamed, registerJobTypes, type Database } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { JobQueues, type RedisClient } from "@conveyor/queue";
import type { BuiltInHandlers } from "../handlers";
import { WORKER_NAME, createProcessor, type AttemptDeps, type RunHandler } from "../executor/attempt";
import { Bookkeeper } from "../executor/bookkeeper";
import { CancelWatcher } from "../executor/cancellations";
import { CapacityAnnouncer } from "../dispatch/capacity";
import { KeyExpiry } from "../maintenance/key-expiry";
import { Dispatcher } from "../dispatch/dispatcher";
import { EnvelopeWorker } from "../executor/envelopes";
import { Leadership, type LeaderTask } from "../leadership/leadership";
import { Reconciler } from "../maintenance/reconciler";
import { WorkerRegistry } from "./registry";
import { WorkerReaper } from "../maintenance/worker-reaper";

export type RuntimeOptions = {
  db: Database;
  /** Blocking-capable connection (maxRetriesPerRequest: null) for the BullMQ workers. */
  redis: RedisClient;
  /** Fail-fast connection for the reconciler, the dispatcher and the leader's lease. */
  producerRedis: RedisClient;
  /** A connection of its own for cancellation messages (a subscribed connection can do nothing else). */
  subscriberRedis: RedisClient;
  logger: Logger;
  prefix: string;
  /** WORKER_TYPES, or undefined for every built-in and plugin type. */
  types: string[] | undefined;
  concurrency: number;
  lockMs: number;
  retryBaseMs: number;
  reconcileIntervalMs: number;
  reconcileGraceMs: number;
  catalogOptions: CatalogOptions;
  /** Handlers of the served built-in types. */
  handlers: Partial<BuiltInHandlers>;
  plugins: JobPlugin[];
  /** Conveyor's own job types (`_…`, e.g. webhook deliveries), run like the others; served unless `types` leaves them out. */
  internal?: InternalHandler[];
  /** ORG_CONCURRENCY_LIMIT (0 = no cap). */
  orgConcurrencyLimit: number;
  /** ENVELOPE_MAX: most jobs one envelope carries (the leader's dispatcher packs them). */
  envelopeMax?: number;
  /** TYPE_RATE_LIMITS (applied by the leader's dispatcher). */
  typeRateLimits?: Map<string, TypeRateLimit>;
  /** TYPE_TIMEOUTS. */
  typeTimeouts?: Map<string, number>;
  /** WORKER_HEARTBEAT_MS: how often this worker writes its busy slots to the worker registry. Default 5 s. */
  heartbeatMs?: number;
  /** More tasks for the leader (schedules, the webhook relay, retention). */
  leaderTasks?: LeaderTask[];
  onAttempt?: AttemptDeps["onAttempt"];
  onReenqueued?(count: number): void;
};

/** An internal job type and what runs it (on the payload's JSON text). */
export type InternalHandler = { type: string; run: RunHandler };

export type Runtime = {
  types: string[];
  /** Every type this process knows (built in, its plugins, internal), served or not. */
  knownTypes: string[];
  /** Whether this process holds the leader's lease now. */
  isLeader(): boolean;
  /** Active attempts right now. */
  active(): number;
  /**
   * Stops taking jobs and waits up to `graceMs` for in-flight attempts; then aborts them (they go back to
   * their queue without consuming a retry) and waits `abortMs` more. Resolves with the attempts still
   * running after that (left to stalled-job recovery).
   */
  close(graceMs: number, abortMs?: number): Promise<number>;
};

function builtInRunner<T extends keyof BuiltInHandlers>(type: T, handlers: Partial<BuiltInHandlers>, options: CatalogOptions): RunHandler {
  const handler = handlers[type];
  if (!handler) throw new StartupError(`no handler was created for ${type}`);
  return async (payloadJson, ctx) => {
    const checked = validatePayload(type, JSON.parse(payloadJson), options);
    if (!checked.ok) {
      throw new PermanentJobError(`The payload is not valid for ${type}: ${checked.details.map((d) => `payload.${d.path} ${d.message}`).join("; ")}`);
    }
    return (handler as (payload: unknown, c: typeof ctx) => ReturnType<RunHandler>)(checked.value, ctx);
  };
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const pluginTypes = options.plugins.map((p) => p.type);
  const internal = new Map((options.internal ?? []).map((h) => [h.type, h.run]));
  const available = new Set<string>([...BUILT_IN_TYPES, ...pluginTypes, ...internal.keys()]);
  const types = options.types ?? [...available];
  const unknown = types.filter((t) => !available.has(t));
  if (unknown.length) {
    throw new StartupError(`WORKER_TYPES names ${unknown.join(", ")}, which is neither built in nor provided by WORKER_PLUGINS`);
  }
  // A plugin under an organization's own type name (docs/reference/lifecycle.md#your-own-workers) would have the built-in workers run that
  // organization's jobs: refused, as POST /job-types refuses a plugin type's name.
  const taken = await orgTypesNamed(options.db.pool, pluginTypes);
  if (taken.length) {
    throw new StartupError(
      `WORKER_PLUGINS declares ${taken.map((t) => `"${t}"`).join(", ")}, registered by an organization as its own job type (its jobs run on that organization's workers only); give the plugin another type name`,
    );
  }
  await registerJobTypes(options.db.pool, pluginTypes);

  const shutdown = new AbortController();
  const bookkeeper = new Bookkeeper({ pool: options.db.pool, logger: options.logger });
  const cancellations = new CancelWatcher({ pool: options.db.pool, subscriber: options.subscriberRedis, prefix: options.prefix, logger: options.logger });
  await cancellations.start();
  const attemptDeps: AttemptDeps = {
    cancellations,
    bookkeeper,
    pool: options.db.pool,
    logger: options.logger,
    retryBaseMs: options.retryBaseMs,
    shutdownSignal: shutdown.signal,
    typeTimeouts: options.typeTimeouts,
    onAttempt: options.onAttempt,
  };
  // Registered before any envelope is fetched: the registry's id names this worker as the holder of the jobs it
  // claims, and its heartbeat is what keeps them its own (docs/reference/lifecycle.md#storage-and-leases). A heartbeat
  // may come while the queue workers below are still starting: it then reports none of them busy.
  let workers: EnvelopeWorker[] = [];
  const active = (): number => workers.reduce((n, w) => n + w.running, 0);
  const registry = new WorkerRegistry({
    pool: options.db.pool,
    logger: options.logger,
    types,
    concurrency: options.concurrency,
    heartbeatMs: options.heartbeatMs ?? 5_000,
    busy: (): { count: number; jobIds: string[] } => ({ count: active(), jobIds: workers.flatMap((w) => [...w.runningIds]) }),
  });
  await registry.start();
  workers = types.map((type) => {
    const plugin = options.plugins.find((p) => p.type === type);
    const run: RunHandler =
      internal.get(type) ??
      (isBuiltInType(type)
        ? builtInRunner(type, options.handlers, options.catalogOptions)
        : async (payloadJson, ctx) => plugin!.handle(Buffer.from(payloadJson, "utf8"), ctx));
    return new EnvelopeWorker({
      type,
      redis: options.redis,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockMs: options.lockMs,
      workerName: WORKER_NAME,
      holder: registry.id,
      bookkeeper,
      pool: options.db.pool,
      logger: options.logger,
      runAttempt: createProcessor(type, run, attemptDeps),
      onSkipped: () => options.onAttempt?.({ type, outcome: "skipped", durationMs: 0 }),
    });
  });
  await Promise.all(workers.map((w) => w.start()));

  const queues = new JobQueues({ connection: options.producerRedis, prefix: options.prefix });
  const reconciler = new Reconciler({
    pool: options.db.pool,
    redis: options.producerRedis,
    queues,
    prefix: options.prefix,
    logger: options.logger,
    intervalMs: options.reconcileIntervalMs,
    graceMs: options.reconcileGraceMs,
    onReenqueued: options.onReenqueued,
  });
  reconciler.start();

  const capacity = new CapacityAnnouncer({
    redis: options.producerRedis,
    prefix: options.prefix,
    workerName: WORKER_NAME,
    types,
    concurrency: options.concurrency,
  });
  capacity.start();
  const leadership = new Leadership({
    redis: options.producerRedis,
    prefix: options.prefix,
    logger: options.logger,
    tasks: [
      new Dispatcher({
        pool: options.db.pool,
        redis: options.producerRedis,
        queues,
        prefix: options.prefix,
        logger: options.logger,
        orgCap: options.orgConcurrencyLimit,
        typeRateLimits: options.typeRateLimits,
        envelopeMax: options.envelopeMax,
      }),
      new KeyExpiry({ pool: options.db.pool, logger: options.logger, intervalMs: options.reconcileIntervalMs }),
      new WorkerReaper({ pool: options.db.pool, logger: options.logger }),
      ...(options.leaderTasks ?? []),
    ],
  });
  leadership.start();

  return {
    types,
    knownTypes: [...available],
    isLeader: () => leadership.isLeader,
    active,
    async close(graceMs, abortMs = 5_000) {
      // Another replica takes the lead (and this worker's share of slots) at once; the jobs this worker was handed and
      // has not started go back in line at once, in one statement per type.
      await Promise.all([leadership.stop(), capacity.stop(), reconciler.stop(), ...workers.map((w) => w.stopFetching())]);
      const drained = Promise.all(workers.map((w) => w.drained()));
      const within = (ms: number) => Promise.race([drained.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
      if (!(await within(graceMs))) {
        options.logger.warn(`${active()} job(s) still running after the ${graceMs} ms grace period: aborting them; they go back to their queue`);
        shutdown.abort(new Error("worker shutting down"));
        await within(abortMs);
      }
      const left = active();
      if (left) options.logger.warn(`${left} job(s) ignored the abort; they will be recovered by another worker once their lock expires`);
      await Promise.race([bookkeeper.drain(), new Promise((r) => setTimeout(r, 10_000).unref())]);
      // Shown on the Workers view while it drains; gone from it once nothing runs.
      await registry.stop();
      await Promise.all(workers.map((w) => w.close().catch(() => {})));
      cancellations.stop();
      await queues.close();
      return left;
    },
  };
}
