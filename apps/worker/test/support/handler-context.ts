// A JobContext for calling one handler directly in a test: it keeps the log lines and the artifact in
// memory so the test can assert on them. End-to-end tests go through the real worker runtime instead.
import { randomUUID } from "node:crypto";
import { WaitpointFailedError, type JobContext, type LogLevel } from "@conveyor/contracts";
import type pg from "pg";

export type RecordedContext = JobContext & {
  lines: { level: LogLevel; message: string }[];
  artifact?: { contentType: string; filename: string; data: Buffer };
  /** What the handler reported with ctx.progress and ctx.output, in order. */
  progressReports: { fraction: number; message?: string }[];
  outputChunks: string[];
  abort(reason?: string): void;
};

export function handlerContext(
  overrides: Partial<Pick<JobContext, "jobId" | "orgId" | "type" | "attempt" | "maxRetries" | "dependencies">> & {
    /** The artifacts of the dependencies, by job id. */
    artifacts?: Record<string, { contentType: string; filename: string; data: Buffer }>;
  } = {},
): RecordedContext {
  const controller = new AbortController();
  const ctx: RecordedContext = {
    jobId: randomUUID(),
    orgId: randomUUID(),
    type: "test",
    attempt: 1,
    maxRetries: 0,
    dependencies: [],
    ...overrides,
    async dependencyArtifact(jobId) {
      return ctx.dependencies.some((d) => d.id === jobId) ? (overrides.artifacts?.[jobId] ?? null) : null;
    },
    signal: controller.signal,
    lines: [],
    log(level, message) {
      ctx.lines.push({ level, message });
    },
    progressReports: [],
    outputChunks: [],
    progress(fraction, message) {
      ctx.progressReports.push({ fraction, message });
    },
    output(chunk) {
      ctx.outputChunks.push(chunk);
    },
    async saveArtifact(artifact) {
      ctx.artifact = artifact;
    },
    // Steps run in place here; a sleep or a wait needs the real runtime (test/steps.test.ts).
    async step(_name, fn) {
      return fn();
    },
    async sleep() {
      throw new Error("ctx.sleep needs the worker runtime");
    },
    async waitFor() {
      throw new Error("ctx.waitFor needs the worker runtime");
    },
    abort(reason) {
      controller.abort(new Error(reason ?? "aborted"));
    },
  };
  return ctx;
}

/** What withStoredSteps' ctx.waitFor throws while its waitpoint waits (the worker runtime would suspend the job). */
export class StillWaiting extends Error {
  constructor(readonly waitpointId: string) {
    super(`waiting for waitpoint ${waitpointId}`);
  }
}

/**
 * Gives `ctx` a ctx.step that keeps results in `stored` (one map per job, shared by its attempts) and a ctx.waitFor
 * (by waitpoint id) that answers from the real waitpoint row: its data once completed, WaitpointFailedError once
 * expired or cancelled, StillWaiting meanwhile. For calling a handler of steps directly; the runtime's own steps are
 * tested in test/steps.test.ts.
 */
export function withStoredSteps(ctx: RecordedContext, pool: pg.Pool, stored: Map<string, unknown>): RecordedContext {
  ctx.step = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
    if (!stored.has(name)) stored.set(name, JSON.parse(JSON.stringify((await fn()) ?? null)));
    return structuredClone(stored.get(name)) as T;
  };
  ctx.waitFor = async (_name, waitpoint) => {
    const id = waitpoint as string;
    const { rows } = await pool.query<{ status: string; data: unknown }>("SELECT status, data FROM waitpoints WHERE id = $1", [id]);
    if (rows[0]!.status === "completed") return rows[0]!.data;
    if (rows[0]!.status === "waiting") throw new StillWaiting(id);
    throw new WaitpointFailedError(id, rows[0]!.status);
  };
  return ctx;
}

/** What a handler's call throws; the test fails if it succeeds instead. */
export async function failureOf(call: () => Promise<unknown>): Promise<Error> {
  try {
    await call();
  } catch (error) {
    return error as Error;
  }
  throw new Error("the handler succeeded");
}
