// Durable steps for one attempt (docs/reference/lifecycle.md#waitpoints-and-durable-steps): ctx.step, ctx.sleep and ctx.waitFor. The job's stored steps are read
// once, on first use; a step that succeeded before is answered from its stored result, a sleep whose time has come
// and a wait whose waitpoint ended are marked over and answered. Everything else ends the attempt through the job
// state machine (packages/db/src/job-machine/steps.ts, suspend.ts) and throws JobSuspendedError, which the
// attempt wrapper takes as "suspended": no outcome to record, no retry spent, the slot free.
import { createHash, randomBytes } from "node:crypto";
import {
  JobSuspendedError,
  PermanentJobError,
  SLEEP_MAX_MS,
  STEP_NAME_MAX_LENGTH,
  STEP_RESULT_MAX_BYTES,
  WAITPOINT_TIMEOUT_MAX_SECONDS,
  WAITPOINT_TIMEOUT_MIN_SECONDS,
  WaitpointFailedError,
  type JobContext,
  type LogLevel,
} from "@conveyor/contracts";
import { finishStep, newId, readSteps, recordStep, suspendForSleep, suspendForWait, type StepRow } from "@conveyor/db";
import type pg from "pg";

export { JobSuspendedError };

type Steps = Pick<JobContext, "step" | "sleep" | "waitFor">;

/** The ctx.step, ctx.sleep and ctx.waitFor of one attempt of `job`, which holds `fence`. */
export function durableSteps(options: {
  pool: pg.Pool;
  job: { id: string; orgId: string };
  fence: string;
  attempt: number;
  log(level: LogLevel, message: string): void;
  /** Writes the attempt's waiting progress and output (live.ts): a suspension ends the fence they are written under. */
  flush(): Promise<void>;
}): Steps {
  const { pool, job, fence, attempt, log, flush } = options;
  let stored: Promise<Map<string, StepRow>> | undefined;
  const seen = new Set<string>();
  /** The step stored under `name`, after checking the name is new in this attempt. */
  const begin = async (name: string): Promise<StepRow | undefined> => {
    if (typeof name !== "string" || name.length === 0 || name.length > STEP_NAME_MAX_LENGTH) {
      throw new PermanentJobError(`a step's name must be 1 to ${STEP_NAME_MAX_LENGTH} characters`);
    }
    if (seen.has(name)) throw new PermanentJobError(`the step name "${name}" is used twice; step names are unique per job`);
    seen.add(name);
    stored ??= readSteps(pool, job.id);
    return (await stored).get(name);
  };
  const lost = () => new Error("this attempt no longer owns the job (a newer attempt or a cancellation took it); it stops here");

  return {
    async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
      const row = await begin(name);
      if (row) {
        if (row.kind !== "step") throw new PermanentJobError(`the step name "${name}" is used twice; step names are unique per job`);
        return (row.resultJson === null ? undefined : JSON.parse(row.resultJson)) as T;
      }
      const startedAt = new Date();
      const value = await fn();
      let json: string | null;
      try {
        json = value === undefined ? null : (JSON.stringify(value) ?? null);
      } catch (error) {
        throw new PermanentJobError(`step "${name}" returned a value that is not JSON (${(error as Error).message}); a step's result is stored as JSON`);
      }
      if (json !== null && Buffer.byteLength(json, "utf8") > STEP_RESULT_MAX_BYTES) {
        throw new PermanentJobError(
          `step "${name}" returned ${Buffer.byteLength(json, "utf8")} bytes of JSON; a step's result is at most ${STEP_RESULT_MAX_BYTES}`,
        );
      }
      if (!(await recordStep(pool, { jobId: job.id, fence, name, attempt, resultJson: json, startedAt }))) throw lost();
      // What a later attempt replays is the stored JSON: answer the same now.
      return (json === null ? undefined : JSON.parse(json)) as T;
    },

    async sleep(name: string, ms: number): Promise<void> {
      if (!Number.isFinite(ms) || ms < 0 || ms > SLEEP_MAX_MS) throw new PermanentJobError(`ctx.sleep("${name}") takes 0 to ${SLEEP_MAX_MS} ms`);
      const row = await begin(name);
      if (row && row.kind !== "sleep") throw new PermanentJobError(`the step name "${name}" is used twice; step names are unique per job`);
      if (row?.status === "completed") return;
      const wakeAt = row?.wakeAt ?? new Date(Date.now() + ms);
      if (wakeAt.getTime() <= Date.now()) {
        if (!(await finishStep(pool, { jobId: job.id, fence, name, status: "completed" }))) throw lost();
        return;
      }
      await flush();
      if (!(await suspendForSleep(pool, { jobId: job.id, fence, name, attempt, wakeAt }))) throw lost();
      log("info", `Attempt ${attempt} sleeps (${name}) until ${wakeAt.toISOString()}; its slot is free meanwhile.`);
      throw new JobSuspendedError(`sleeping until ${wakeAt.toISOString()}`);
    },

    async waitFor(name: string, waitpoint: string | { timeout_seconds: number }): Promise<unknown> {
      const row = await begin(name);
      if (row && row.kind !== "wait") throw new PermanentJobError(`the step name "${name}" is used twice; step names are unique per job`);
      let create: { orgId: string; tokenHash: Buffer; timeoutSeconds: number } | undefined;
      let waitpointId = row?.waitpointId ?? null;
      if (waitpointId === null) {
        if (typeof waitpoint === "string") waitpointId = waitpoint.toLowerCase();
        else {
          const seconds = waitpoint?.timeout_seconds;
          if (!Number.isInteger(seconds) || seconds < WAITPOINT_TIMEOUT_MIN_SECONDS || seconds > WAITPOINT_TIMEOUT_MAX_SECONDS) {
            throw new PermanentJobError(
              `ctx.waitFor("${name}") takes timeout_seconds from ${WAITPOINT_TIMEOUT_MIN_SECONDS} to ${WAITPOINT_TIMEOUT_MAX_SECONDS}`,
            );
          }
          // Nobody is given this token: the waitpoint is completed by id (API, console) or by a provider's callback.
          create = { orgId: job.orgId, tokenHash: createHash("sha256").update(randomBytes(32)).digest(), timeoutSeconds: seconds };
          waitpointId = newId();
        }
      }
      await flush();
      const outcome = await suspendForWait(pool, { jobId: job.id, fence, name, attempt, waitpointId, create });
      if (outcome.outcome === "lost") {
        if (typeof waitpoint === "string" && !row)
          throw new PermanentJobError(`ctx.waitFor("${name}"): ${waitpoint} is not a waitpoint of this job's organization`);
        throw lost();
      }
      if (outcome.outcome === "suspended") {
        log("info", `Attempt ${attempt} waits (${name}) for waitpoint ${waitpointId}; its slot is free meanwhile.`);
        throw new JobSuspendedError(`waiting for waitpoint ${waitpointId}`);
      }
      const completed = outcome.status === "completed";
      if (!(await finishStep(pool, { jobId: job.id, fence, name, status: completed ? "completed" : "failed" })) && row) throw lost();
      if (!completed) throw new WaitpointFailedError(outcome.waitpointId, outcome.status);
      return outcome.data;
    },
  };
}
