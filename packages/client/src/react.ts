// `@conveyor/client/react`: useJob(id, token) for React pages (docs/reference/events.md#progress-and-live-results). A separate entry point, so servers that
// import `@conveyor/client` never load React (a peer dependency, optional for them).
import { useEffect, useState } from "react";
import { subscribeToJob, type JobProgress, type JobSubscriptionError, type LiveJob, type SubscribeOptions } from "./subscribe.js";

export type { JobProgress, JobSubscriptionError, LiveJob, SubscribeOptions };

export type UseJobState = {
  /** The job as its last event carried it (without its payload); null until the first event. */
  job: LiveJob | null;
  progress: JobProgress | null;
  /** Everything the job wrote with ctx.output so far, in order. */
  output: string;
  /** Why the stream stopped for good (token unknown, expired or revoked; job gone), or null. */
  error: JobSubscriptionError | null;
};

const EMPTY: UseJobState = { job: null, progress: null, output: "", error: null };

/**
 * Follows job `id` with its public token while the component is mounted: re-renders with its status, progress and
 * output as they change. A null id or token follows nothing (yet).
 */
export function useJob(id: string | null | undefined, token: string | null | undefined, options?: SubscribeOptions): UseJobState {
  const [state, setState] = useState<UseJobState>(EMPTY);
  const baseUrl = options?.baseUrl;
  const transport = options?.transport;
  useEffect(() => {
    setState(EMPTY);
    if (!id || !token) return;
    const subscription = subscribeToJob(
      id,
      token,
      {
        onJob: (job) => setState((s) => ({ ...s, job, progress: job.progress ?? s.progress })),
        onOutput: (_chunk, output) => setState((s) => ({ ...s, output })),
        onError: (error) => setState((s) => ({ ...s, error })),
      },
      { baseUrl, transport },
    );
    return () => subscription.close();
  }, [id, token, baseUrl, transport]);
  return state;
}
