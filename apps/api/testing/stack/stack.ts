// A whole Conveyor for system tests: the real API (in-process, with its own database and Redis prefix) and
// real worker processes started from source, with the test plugins loaded. Tests drive it over HTTP. Beside
// the org the tests use, the stack holds a second org that every test must leave untouched.
import path from "node:path";
import { redisKeyPrefix } from "@conveyor/queue";
import { repoRoot, spawnService, waitFor, type ServiceProcess, type TestDatabase } from "@conveyor/testkit";
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "../index";

export const SCRIPTED_PLUGIN = path.join(__dirname, "scripted-plugin.js");
export const EXAMPLE_PLUGIN = path.join(repoRoot, "examples/plugins/word-count.js");
/** The test plugin "stepped": a handler on durable steps (docs/reference/lifecycle.md#waitpoints-and-durable-steps); workers load it when WORKER_PLUGINS names it. */
export const STEPS_PLUGIN = path.join(__dirname, "steps-plugin.js");

export type JobView = {
  id: string;
  type: string;
  status: string;
  payload: unknown;
  retries: number;
  max_retries: number;
  result: unknown;
  error: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
};
export type LogView = { attempt: number; message: string; level: string; timestamp: string };

export type StackOptions = {
  /** API environment overrides (e.g. REDIS_URL of a private Redis). */
  apiEnv?: Record<string, string>;
  /** Environment every worker of this stack gets on top of the defaults. */
  workerEnv?: Record<string, string>;
  /** A database to use instead of a fresh clone on the shared server. */
  database?: TestDatabase;
  /** The API's clock runs with real time (TestApiOptions.realTime). Default false. */
  realTime?: boolean;
};

export type Stack = {
  api: TestApi;
  owner: TestMember;
  apiKey: string;
  /** A second organization with a finished job of its own; nothing the tests do may change what it sees. */
  otherOrg: SecondOrg;
  redisUrl: string;
  /** What every Redis key and channel of this stack starts with: its REDIS_PREFIX as a hash tag (`{…}`). */
  prefix: string;
  workers: ServiceProcess[];
  /** Starts a worker process and waits until it serves jobs. */
  startWorker(env?: Record<string, string>): Promise<ServiceProcess>;
  /** Starts a worker process without waiting (it may die before it says it started). */
  spawnWorker(env?: Record<string, string>): ServiceProcess;
  /** Makes the API accept the test plugin types before any worker registered them. */
  registerPluginTypes(): Promise<void>;
  post(pathname: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  job(id: string): Promise<JobView>;
  logs(id: string): Promise<LogView[]>;
  /** Polls the job until `done(job)` holds. */
  waitForJob(id: string, done: (job: JobView) => boolean, timeoutMs?: number): Promise<JobView>;
  /**
   * Fails unless the second org still sees exactly what it saw when the stack started (its list, its job, the
   * job's logs), none of the first org's jobs is in its lists, and the first org's key cannot read its job.
   */
  expectOtherOrgUntouched(): Promise<void>;
  close(): Promise<void>;
};

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const api = await startTestApi({ RETRY_BASE_MS: "100", ...options.apiEnv }, { database: options.database, realTime: options.realTime });
  const owner = await createOrg(api.database.db, api.deps.config);
  const { key: apiKey } = await createApiKey(api.database.db, owner);
  const otherOrg = await createSecondOrg(api.database.db);
  await otherOrg.watch(api.get);
  const workers: ServiceProcess[] = [];
  const redisUrl = api.deps.config.REDIS_URL;
  const prefix = redisKeyPrefix(api.deps.config.REDIS_PREFIX);

  const stack: Stack = {
    api,
    owner,
    apiKey,
    otherOrg,
    redisUrl,
    prefix,
    workers,
    async startWorker(env = {}) {
      const worker = stack.spawnWorker(env);
      await worker.waitForOutput(/worker started/, 30_000);
      return worker;
    },
    spawnWorker(env = {}) {
      const worker = spawnService("worker", {
        NODE_ENV: "test",
        LOG_LEVEL: "debug",
        DATABASE_URL: api.database.url,
        ...(api.database.directUrl ? { DATABASE_DIRECT_URL: api.database.directUrl } : {}),
        REDIS_URL: redisUrl,
        REDIS_PREFIX: api.deps.config.REDIS_PREFIX,
        WORKER_METRICS_PORT: "0",
        WORKER_PLUGINS: `${SCRIPTED_PLUGIN},${EXAMPLE_PLUGIN}`,
        WORKER_CONCURRENCY: "5",
        WORKER_LOCK_MS: "5000",
        WORKER_SHUTDOWN_MS: "3000",
        RETRY_BASE_MS: "100",
        RECONCILE_INTERVAL_MS: "500",
        RECONCILE_GRACE_MS: "1500",
        ...options.workerEnv,
        ...env,
      });
      workers.push(worker);
      return worker;
    },
    async registerPluginTypes() {
      await api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('scripted'), ('word_count') ON CONFLICT DO NOTHING");
    },
    async post(pathname, body, headers = {}) {
      const res = await api.request
        .post(pathname)
        .set("X-API-Key", apiKey)
        .set(headers)
        .send(body as object);
      return { status: res.status, body: res.body };
    },
    async job(id) {
      const res = await api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
      if (res.status !== 200) throw new Error(`GET /jobs/${id}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as JobView;
    },
    async logs(id) {
      const res = await api.request.get(`/jobs/${id}/logs`).set("X-API-Key", apiKey);
      if (res.status !== 200) throw new Error(`GET /jobs/${id}/logs: ${res.status}`);
      return res.body as LogView[];
    },
    async waitForJob(id, done, timeoutMs = 30_000) {
      let last: JobView | undefined;
      try {
        return await waitFor(
          async () => {
            last = await stack.job(id);
            return done(last) ? last : null;
          },
          `job ${id}`,
          timeoutMs,
          100,
        );
      } catch (error) {
        const logs = await stack.logs(id).catch(() => []);
        throw new Error(
          `${(error as Error).message}\nlast state: ${JSON.stringify(last)}\nlogs: ${JSON.stringify(logs, null, 1)}\nworker output:\n${workers.map((w) => w.output().slice(-3000)).join("\n---\n")}`,
          { cause: error },
        );
      }
    },
    expectOtherOrgUntouched: () => otherOrg.expectUntouched({ "X-API-Key": apiKey }),
    async close() {
      await Promise.all(workers.map((w) => w.stop("SIGKILL")));
      await api.close();
    },
  };
  return stack;
}

/** Log lines of one attempt. */
export function attemptLines(logs: LogView[], attempt: number): string[] {
  return logs.filter((l) => l.attempt === attempt).map((l) => l.message);
}

/** How many times an attempt started (one per delivery that ran the handler). */
export function starts(logs: LogView[]): number {
  return logs.filter((l) => /^Attempt \d+ of \d+ started/.test(l.message)).length;
}
export { ScriptedLog, type SpanRun } from "./scripted-log";
