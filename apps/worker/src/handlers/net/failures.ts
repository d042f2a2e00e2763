// Turns what went wrong on the way to a user-supplied URL into retry-or-give-up (docs/reference/providers.md#retry-matrix):
// a guard refusal or an oversized body is permanent, anything that looks like the network is worth a retry.
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import { BodyTooLargeError, ForbiddenTargetError } from "@conveyor/net";

export type Deadline = {
  /** Fires on the job's own signal or when the time is up. */
  signal: AbortSignal;
  /** True once the time is up (as opposed to the job being aborted). */
  expired(): boolean;
  ms: number;
};

/** A total time budget for one job's network work, combined with the job's own abort signal. */
export function deadline(jobSignal: AbortSignal, ms: number): Deadline {
  const timer = AbortSignal.timeout(ms);
  return { signal: AbortSignal.any([jobSignal, timer]), expired: () => timer.aborted && !jobSignal.aborted, ms };
}

/**
 * The job error for a failed exchange with `target` (a host name, never a full URL: paths and queries may
 * carry the receiver's tokens). An abort of the job itself is rethrown as it is, for the runtime to handle.
 */
export function exchangeFailure(error: unknown, target: string, time: Deadline): unknown {
  if (error instanceof PermanentJobError || error instanceof RetryableJobError) return error;
  if (error instanceof ForbiddenTargetError) return new PermanentJobError(`${target} refused by the SSRF guard: ${error.message}`);
  if (error instanceof BodyTooLargeError) return new PermanentJobError(`${target} sent too much: ${error.message}`);
  if (time.expired()) return new RetryableJobError(`${target} did not answer within ${time.ms} ms`);
  if (time.signal.aborted) return error;
  const { code, address } = error as { code?: string; address?: string };
  const where = address ? ` at ${address}` : "";
  return new RetryableJobError(`${target} could not be reached (${code ?? oneLine((error as Error).message)}${where})`);
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 200);
