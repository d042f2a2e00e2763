// The Retries view's data (issue 38, issue 48 #6): the jobs waiting to retry, and the actions on them — one job now or
// given up, or all the listed ones at once (Sidekiq's and Oban Web's "Retry all" / "Kill all").
import { useQuery } from "@tanstack/react-query";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { useAction } from "./actions";
import { keys } from "./keys";
import { shortId } from "../ui/format";

export type Retrying = ResponseBody<"/jobs/retries", "get">["items"][number];

/** The most the view lists (the API's maximum page). */
export const RETRIES_SHOWN = 200;

export const retriesQuery = () => ({
  queryKey: keys.retries.all,
  queryFn: () => call(api.GET("/jobs/retries", { params: { query: { limit: RETRIES_SHOWN } } })),
  refetchInterval: 5_000,
});

export function useRetries() {
  return useQuery(retriesQuery());
}

/** Soonest first, and the same order for the same answer: jobs due at the same moment by id. */
export function retryOrder(a: Retrying, b: Retrying): number {
  return a.next_attempt_at < b.next_attempt_at ? -1 : a.next_attempt_at > b.next_attempt_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const refresh = (ids: readonly string[]) => [keys.retries.all, keys.jobs.all, ...ids.slice(0, 20).map((id) => keys.job.detail(id))];
/** Run-now calls of a "Retry all" under way at once. */
const PARALLEL = 4;

/** `onDone`: a job retried now or given up (its row may leave); `onBulkDone`: an action on all of them ended. */
export function useRetryActions(options: { onDone?: (id: string) => void; onBulkDone?: () => void }) {
  const retryNow = useAction({
    run: (job: Retrying) => call(api.POST("/jobs/{id}/run-now", { params: { path: { id: job.id } } })),
    done: (_job, input) => `${input.type} ${shortId(input.id)} retries now.`,
    failed: (job) => `Could not retry ${job.type} ${shortId(job.id)} now`,
    refresh: (job) => refresh([job.id]),
    onSuccess: (_job, input) => options.onDone?.(input.id),
  });
  const giveUp = useAction({
    run: (job: Retrying) => call(api.POST("/jobs/{id}/cancel", { params: { path: { id: job.id } } })),
    done: (_job, input) => `Gave up ${input.type} ${shortId(input.id)}: it will not be retried.`,
    failed: (job) => `Could not give up ${job.type} ${shortId(job.id)}`,
    refresh: (job) => refresh([job.id]),
    onSuccess: (_job, input) => options.onDone?.(input.id),
  });
  const retryAll = useAction({
    run: async (ids: readonly string[]) => {
      let done = 0;
      const queue = [...ids];
      const next = async (): Promise<void> => {
        const id = queue.shift();
        if (!id) return;
        // A job that started or was given up meanwhile answers 409: it is no longer waiting, nothing to do.
        const { response } = await api.POST("/jobs/{id}/run-now", { params: { path: { id } } });
        if (response.ok) done++;
        return next();
      };
      await Promise.all(Array.from({ length: PARALLEL }, next));
      return done;
    },
    done: (done, ids) =>
      done === ids.length ? `${done} job${done === 1 ? "" : "s"} retry now.` : `${done} of ${ids.length} retry now; the others no longer waited.`,
    failed: "Could not retry them all",
    refresh: (ids) => refresh(ids),
    onSuccess: () => options.onBulkDone?.(),
  });
  const giveUpAll = useAction({
    // One call: the view lists at most RETRIES_SHOWN jobs, fewer than POST /jobs/bulk takes by id.
    run: async (ids: readonly string[]) => (await call(api.POST("/jobs/bulk", { body: { action: "cancel", ids: [...ids] } }))).affected,
    done: (affected) => `Gave up ${affected} job${affected === 1 ? "" : "s"}: they will not be retried.`,
    failed: "Could not give them all up",
    refresh: (ids) => refresh(ids),
    onSuccess: () => options.onBulkDone?.(),
  });
  return { retryNow, giveUp, retryAll, giveUpAll };
}
