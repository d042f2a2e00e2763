// A JobContext for calling one handler directly in a test: it keeps the log lines and the artifact in
// memory so the test can assert on them. End-to-end tests go through the real worker runtime instead.
import { randomUUID } from "node:crypto";
import type { JobContext, LogLevel } from "@conveyor/contracts";

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
