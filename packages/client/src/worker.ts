// createWorker: a worker of your organization's own job types over the worker protocol (docs/reference/lifecycle.md#your-own-workers), in TypeScript or
// JavaScript, with nothing but HTTP — no Redis or Postgres access. It long-polls POST /worker/lease for as many jobs as
// it has free slots, runs each handler with a context (steps, sleeps, waits, progress, output, log lines, a signal),
// heartbeats the leases of running jobs, and reports outcomes under their lease tokens — what finished since the last
// report, in one POST /worker/outcomes, so a busy worker makes a few calls per lease rather than one per job. stop()
// stops leasing, waits for running handlers up to a timeout, hands back what is still running, and sends what is left.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ApiErrorBody = components["schemas"]["Error"];
type OutcomeReport = paths["/worker/outcomes"]["post"]["requestBody"]["content"]["application/json"]["outcomes"][number];

/** Most outcomes in one POST /worker/outcomes (the API takes up to 200). */
const OUTCOMES_PER_CALL = 200;
/** While handlers run, a lease call waits this long for more slots to free, so it brings a batch rather than one job. */
const GATHER_MS = 10;

/** A job as the lease hands it over. */
export type LeasedJob = components["schemas"]["LeasedJob"];

export type WorkerContext = {
  jobId: string;
  type: string;
  /** This attempt's number: 1 for the first. */
  attempt: number;
  /** The jobs and waitpoints the job depends on, with their results. */
  dependencies: LeasedJob["dependencies"];
  /** Aborted when someone asks to cancel the job (seen at a heartbeat) or the lease is lost. */
  signal: AbortSignal;
  /** Runs `fn` at most once to success per job; a later attempt gets the stored (JSON) result. */
  step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** Ends the attempt until `ms` from now without spending a retry; the job runs again then and this resolves. */
  sleep(name: string, ms: number): Promise<void>;
  /** Ends the attempt until a waitpoint (given, or made here) completes; resolves with its data on the next attempt. */
  waitFor(name: string, waitpoint: string | { timeout_seconds: number }): Promise<unknown>;
  /** The job's progress (0–1), sent with the next heartbeat (at most a few a second). */
  progress(fraction: number, message?: string): void;
  /** Appends text to the job's output. */
  output(text: string): Promise<void>;
  /** A log line of this attempt, sent with the next heartbeat or the outcome. */
  log(message: string, level?: "info" | "warn" | "error"): void;
};

export type WorkerHandler = (payload: LeasedJob["payload"], ctx: WorkerContext) => Promise<unknown> | unknown;

export type CreateWorkerOptions = {
  /** The API's base URL. */
  baseUrl: string;
  /** An API key of the `worker` role. */
  apiKey: string;
  /** Jobs run at once. Default 10. */
  concurrency?: number;
  /** A lease's length in seconds; heartbeats come every third of it. Default 30. */
  leaseSeconds?: number;
  /** How long one lease call waits for work. Default 20 s. */
  pollSeconds?: number;
  /** How long stop() waits for running handlers before handing them back. Default 30 s. */
  shutdownMs?: number;
  /** A name for people (GET /workers). */
  name?: string;
  /** Another fetch (tests, a proxy agent). */
  fetch?: typeof globalThis.fetch;
};

export type ConveyorWorker = {
  /** The worker's id, as GET /workers lists it. */
  readonly id: string;
  /** Registers the handler of `type` (one of your organization's job types). */
  task(type: string, handler: WorkerHandler): ConveyorWorker;
  /** Starts leasing and running jobs; resolves once stop() has finished. */
  run(): Promise<void>;
  /** Stops leasing; running handlers get `shutdownMs`, then what still runs is handed back. */
  stop(): Promise<void>;
};

/** A handler's error that fails its job at once, without spending retries. */
export class PermanentJobError extends Error {
  override name = "PermanentJobError";
}

/** The lease lapsed or was taken over: this attempt's reports are refused (409 lease_lost). */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

/** Ends a handler's attempt for a sleep or a wait: not a failure. */
class Suspended extends Error {}

type Running = {
  job: LeasedJob;
  logs: { level: "info" | "warn" | "error"; message: string }[];
  progress?: { fraction: number; message: string | null };
  abort: AbortController;
  done: boolean;
};

const randomId = () =>
  "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g, (c) => {
    const r = (Math.random() * 16) | 0;
    return (c === "x" ? r : (r & 0x3) | 0x8).toString(16);
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sleeps `ms`, or less once `signal` aborts (then at most 1 s, so running jobs still get their heartbeats while the worker stops). */
const sleepUnless = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, signal.aborted ? Math.min(ms, 1_000) : ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), setTimeout(resolve, 50)), { once: true });
  });

/** A worker of your own job types over the worker protocol: `createWorker({...}).task("resize", fn).run()`. */
export function createWorker(options: CreateWorkerOptions): ConveyorWorker {
  const fetchImpl = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: fetchImpl,
    headers: { Accept: "application/json", "X-API-Key": options.apiKey },
  });
  const concurrency = options.concurrency ?? 10;
  const leaseSeconds = options.leaseSeconds ?? 30;
  const handlers = new Map<string, WorkerHandler>();
  const running = new Map<string, Running>();
  const id = randomId();
  const stopping = new AbortController();
  let finished: Promise<void> | undefined;
  let slotFreed: () => void = () => {};
  const outcomes: OutcomeReport[] = [];
  let sending: Promise<void> | undefined;

  /** Queues an outcome; one call at a time sends what is queued (what gathers meanwhile goes in the next). */
  function queueOutcome(report: OutcomeReport): void {
    outcomes.push(report);
    sending ??= sendOutcomes();
  }

  async function sendOutcomes(): Promise<void> {
    while (outcomes.length) {
      const batch = outcomes.splice(0, OUTCOMES_PER_CALL);
      for (let attempt = 1; attempt <= 3; attempt++) {
        // Sent, or refused as a whole (a 4xx will not change): a lease not reported lapses and its job runs again.
        const sent = await client.POST("/worker/outcomes", { body: { outcomes: batch } }).then(
          () => true,
          () => false,
        );
        if (sent) break;
        await sleep(500 * attempt);
      }
    }
    sending = undefined;
  }

  /** A protocol call about one running job, under its lease token; LeaseLostError on a 409. */
  async function report<T>(path: string, item: Running, body: Record<string, unknown>): Promise<T> {
    const { data, error, response } = await client.POST(path as "/worker/jobs/{id}/complete", {
      params: { path: { id: item.job.id } },
      body: { lease_token: item.job.lease_token, ...body } as { lease_token: string },
    });
    if (response.status === 409 && (error as ApiErrorBody | undefined)?.error.code === "lease_lost") {
      item.abort.abort();
      throw new LeaseLostError((error as ApiErrorBody).error.message);
    }
    if (error !== undefined) throw new Error(`${path}: ${(error as ApiErrorBody).error.code}: ${(error as ApiErrorBody).error.message}`);
    return data as T;
  }

  async function beat(item: Running): Promise<void> {
    const body: Record<string, unknown> = { lease_seconds: leaseSeconds };
    if (item.progress) body.progress = item.progress;
    if (item.logs.length) body.logs = item.logs.splice(0, 100);
    item.progress = undefined;
    const answer = await report<{ cancel_requested: boolean }>("/worker/jobs/{id}/heartbeat", item, body);
    if (answer.cancel_requested) item.abort.abort();
  }

  function context(item: Running): WorkerContext {
    const stored = new Map(item.job.steps.map((s) => [s.name, s]));
    const seen = new Set<string>();
    const begin = (name: string) => {
      if (seen.has(name)) throw new PermanentJobError(`the step name "${name}" is used twice; step names are unique per job`);
      seen.add(name);
      return stored.get(name);
    };
    let lastProgress = 0;
    return {
      jobId: item.job.id,
      type: item.job.type,
      attempt: item.job.attempt,
      dependencies: item.job.dependencies,
      signal: item.abort.signal,
      async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
        const step = begin(name);
        if (step?.kind === "step") return step.result as T;
        const value = await fn();
        const answer = await report<{ result: unknown }>(`/worker/jobs/{id}/steps/${encodeURIComponent(name)}`, item, { result: value });
        return answer.result as T;
      },
      async sleep(name, ms) {
        begin(name);
        const answer = await report<{ outcome: string }>("/worker/jobs/{id}/sleep", item, { name, duration_ms: Math.max(0, Math.round(ms)) });
        if (answer.outcome === "suspended") throw new Suspended();
      },
      async waitFor(name, waitpoint) {
        begin(name);
        const target = typeof waitpoint === "string" ? { waitpoint_id: waitpoint } : { timeout_seconds: waitpoint.timeout_seconds };
        const answer = await report<{ outcome: string; status?: string; data?: unknown; waitpoint_id?: string }>("/worker/jobs/{id}/wait-for", item, {
          name,
          ...target,
        });
        if (answer.outcome === "suspended") throw new Suspended();
        if (answer.status !== "completed") throw new PermanentJobError(`waitpoint ${answer.waitpoint_id} ended ${answer.status}, not completed`);
        return answer.data;
      },
      progress(fraction, message) {
        item.progress = { fraction: Math.min(1, Math.max(0, fraction)), message: message ?? null };
        if (Date.now() - lastProgress >= 250) {
          lastProgress = Date.now();
          void beat(item).catch(() => {});
        }
      },
      async output(text) {
        await report("/worker/jobs/{id}/heartbeat", item, { output: text });
      },
      log(message, level = "info") {
        item.logs.push({ level, message });
      },
    };
  }

  async function execute(item: Running): Promise<void> {
    const handler = handlers.get(item.job.type)!;
    const ids = { job_id: item.job.id, lease_token: item.job.lease_token };
    try {
      let result: unknown;
      try {
        result = await handler(item.job.payload, context(item));
      } catch (error) {
        if (error instanceof Suspended || error instanceof LeaseLostError) return;
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        if (item.logs.length || item.progress) await beat(item);
        queueOutcome({ ...ids, outcome: "fail", error: message, retryable: !(error instanceof PermanentJobError) });
        return;
      }
      if (item.logs.length || item.progress) await beat(item);
      queueOutcome({ ...ids, outcome: "complete", result: (result === undefined ? null : result) as OutcomeReport["result"] });
    } catch {
      // The lease was lost, or the API could not be reached: the lease lapses and the job runs again elsewhere.
    } finally {
      // The slot is free once the handler has returned; its outcome is sent meanwhile.
      item.done = true;
      running.delete(item.job.id);
      slotFreed();
    }
  }

  async function leaseLoop(): Promise<void> {
    const types = [...handlers.keys()];
    const batch = Math.max(1, Math.floor(concurrency / 4));
    while (!stopping.signal.aborted) {
      const free = concurrency - running.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        continue;
      }
      // Slots free one by one while handlers run: wait a moment for a batch's worth (a quarter of them).
      if (free < batch && running.size > 0) {
        await sleep(GATHER_MS);
      }
      const { data, error } = await client
        .POST("/worker/lease", {
          body: {
            types,
            max: Math.min(100, concurrency - running.size),
            wait_seconds: options.pollSeconds ?? 20,
            lease_seconds: leaseSeconds,
            worker_id: id,
            worker_name: options.name ?? "typescript-worker",
            worker_version: "conveyor-client/0.1.0",
            concurrency,
          },
          signal: stopping.signal,
        })
        .catch(() => ({ data: undefined, error: { error: { code: "network", message: "" } } }));
      if (error !== undefined || !data) {
        if (!stopping.signal.aborted) await sleep(1_000);
        continue;
      }
      for (const job of data) {
        const item: Running = { job, logs: [], abort: new AbortController(), done: false };
        running.set(job.id, item);
        void execute(item);
      }
    }
  }

  async function heartbeats(): Promise<void> {
    while (!stopping.signal.aborted || running.size > 0) {
      await sleepUnless(Math.max(500, (leaseSeconds * 1000) / 3), stopping.signal);
      for (const item of [...running.values()]) if (!item.done) await beat(item).catch(() => {});
    }
  }

  const worker: ConveyorWorker = {
    id,
    task(type, handler) {
      handlers.set(type, handler);
      return worker;
    },
    run() {
      if (handlers.size === 0) return Promise.reject(new Error("register a handler with worker.task(type, fn) first"));
      finished ??= Promise.all([leaseLoop(), heartbeats()]).then(() => {});
      return finished;
    },
    async stop() {
      stopping.abort();
      slotFreed();
      const deadline = Date.now() + (options.shutdownMs ?? 30_000);
      while (running.size > 0 && Date.now() < deadline) await sleep(50);
      for (const item of running.values()) queueOutcome({ job_id: item.job.id, lease_token: item.job.lease_token, outcome: "release" });
      running.clear();
      await finished;
      while (sending) await sending;
      // Leaves GET /workers, and its types' count of workers, now rather than after three missed lease calls.
      await client.POST("/worker/stop", { body: { worker_id: id } }).catch(() => undefined);
    },
  };
  return worker;
}
