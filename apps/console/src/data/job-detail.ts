// One job's data: the job, its log lines and attempts (read again while it is unfinished, and kept in step with each
// other), its output, artifact and dependency graph; where else a job id this organization lacks is; and the
// requests that act on one job (cancel, replay, run now, look in another organization).
import { queryOptions, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { startSession, switchOrg } from "../session";
import { FINAL_STATUSES, shortId } from "../ui/format";
import { useAction } from "./actions";
import { keys } from "./keys";

export type Job = ResponseBody<"/jobs/{id}", "get">;
export type LogLine = ResponseBody<"/jobs/{id}/logs", "get">[number];
export type Attempt = ResponseBody<"/jobs/{id}/attempts", "get">[number];

/** How often an unfinished job's page reads it again: a running one often, a pending one less (its wait is long). */
function unfinishedInterval(status: string | undefined): number | false {
  if (status === undefined || FINAL_STATUSES.includes(status)) return false;
  return status === "pending" ? 5_000 : 2_000;
}

export const jobQuery = (id: string) =>
  queryOptions({ queryKey: keys.job.detail(id), queryFn: () => call(api.GET("/jobs/{id}", { params: { path: { id } } })) });

/** The job (null: none), read once (the replay dialog's payload). */
export function useJobDetail(id: string | null) {
  return useQuery({ ...jobQuery(id ?? ""), enabled: id !== null });
}

/**
 * A job with its log lines and attempts. Its events come through the tab's one stream (live.ts), which refreshes
 * these queries. The page does not trust the stream alone (issue 48 #1: a page stayed on PROCESSING for good when the
 * event that ended the job never reached it): while the job is not finished it is read again every few seconds, and
 * a pending job's reason for waiting changes without an event of its own anyway (a queue paused, a slot freed).
 */
export function useJob(id: string) {
  const job = useQuery({ ...jobQuery(id), refetchInterval: (query) => unfinishedInterval(query.state.data?.status) });
  const unfinished = unfinishedInterval(job.data?.status);
  const logs = useQuery({
    queryKey: keys.job.logs(id),
    queryFn: () => call(api.GET("/jobs/{id}/logs", { params: { path: { id } } })),
    refetchInterval: unfinished,
  });
  const attempts = useQuery({
    queryKey: keys.job.attempts(id),
    queryFn: () => call(api.GET("/jobs/{id}/attempts", { params: { path: { id } } })),
    refetchInterval: unfinished,
  });
  // Read apart, the job and its attempts can tell two moments (the job read while running, its attempts after it
  // ended): an attempt that ended the job means the job is read again at once, not at the next interval.
  const lastOutcome = attempts.data?.at(-1)?.outcome;
  const stale =
    job.data !== undefined &&
    !FINAL_STATUSES.includes(job.data.status) &&
    (lastOutcome === "succeeded" || lastOutcome === "failed" || lastOutcome === "cancelled");
  useEffect(() => {
    if (stale) void job.refetch();
  }, [stale, job]);
  // And the other way: a job that changed status (read again above) has its attempts and lines read again with it.
  const queryClient = useQueryClient();
  const status = job.data?.status;
  const seen = useRef(status);
  useEffect(() => {
    if (seen.current === status) return;
    seen.current = status;
    for (const queryKey of [keys.job.attempts(id), keys.job.logs(id)]) void queryClient.invalidateQueries({ queryKey, exact: true });
  }, [status, id, queryClient]);
  return { job, logs, attempts };
}

/** The job's output, as the handler wrote it so far. */
export function useJobOutput(jobId: string) {
  return useQuery({ queryKey: keys.job.output(jobId), queryFn: () => call(api.GET("/jobs/{id}/output", { params: { path: { id: jobId } } })) });
}

/** The dependency graph the job is in. */
export function useJobGraph(id: string) {
  return useQuery({ queryKey: keys.job.graph(id), queryFn: () => call(api.GET("/jobs/{id}/graph", { params: { path: { id } } })) });
}

/** The job's artifact as a blob, with the file name the API gives it (`fallbackName` when it gives none). */
export function useJobArtifact(jobId: string, fallbackName: string) {
  return useQuery({
    queryKey: keys.job.artifact(jobId),
    queryFn: async () => {
      let disposition: string | null = null;
      const blob = await call(
        api.GET("/jobs/{id}/artifact", { params: { path: { id: jobId } }, parseAs: "blob" }).then((answer) => {
          disposition = answer.response.headers.get("content-disposition");
          return answer;
        }),
      );
      const name = disposition ? /filename="([^"]+)"/.exec(disposition)?.[1] : undefined;
      return { blob: blob as Blob, name: name ?? fallbackName };
    },
    staleTime: Infinity,
  });
}

/** What a change of one job reads again: the job, the lists, the Retries view. */
const refreshJob = (id: string) => [keys.job.detail(id), keys.jobs.all, keys.retries.all];

/**
 * Cancel, replay and run now, for a job's page: each updates the job in the cache from the API's answer. `on` says
 * what the page does after each (close its dialog, go to the replay).
 */
export function useJobActions(job: Job, on: { cancelled?: (updated: Job) => void; replayed?: (created: { id: string }) => void }) {
  const queryClient = useQueryClient();
  const cancel = useAction({
    run: () => call(api.POST("/jobs/{id}/cancel", { params: { path: { id: job.id } } })),
    done: (updated) => (updated.status === "cancelled" ? "Job cancelled." : "Cancellation requested; the worker stops it."),
    failed: "Could not cancel",
    refresh: () => refreshJob(job.id),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.job.detail(job.id), updated);
      on.cancelled?.(updated);
    },
  });
  const replay = useAction({
    run: () => call(api.POST("/jobs/{id}/replay", { params: { path: { id: job.id } } })),
    done: (created) => `Replayed as job ${shortId(created.id)}.`,
    failed: "Could not replay",
    refresh: () => refreshJob(job.id),
    onSuccess: (created) => on.replayed?.(created),
  });
  const runNow = useAction({
    run: () => call(api.POST("/jobs/{id}/run-now", { params: { path: { id: job.id } } })),
    done: () => (job.waiting_for === "retry" ? "Retrying now." : "Due now: it starts as soon as a worker is free."),
    failed: "Could not run it now",
    refresh: () => refreshJob(job.id),
    onSuccess: (updated) => queryClient.setQueryData(keys.job.detail(job.id), updated),
  });
  return { cancel, replay, runNow };
}

/** A job's payload edited and run again as a new job (the original lists its replay, the lists have a new job). */
export const replayWithPayload = ({ id, payload }: { id: string; payload: Record<string, unknown> }) =>
  call(api.POST("/jobs/{id}/replay", { params: { path: { id } }, body: { payload } }));
export const replayRefresh = (id: string) => [keys.job.detail(id), keys.jobs.all];

/**
 * The session's other organizations that have a job with this id (issue 48 #10: "Look in …" was offered for an id
 * no organization has, and switching there found nothing either). The API answers none for a malformed id.
 */
export function useJobElsewhere(id: string, { enabled }: { enabled: boolean }) {
  return useQuery({
    queryKey: keys.job.elsewhere(id),
    queryFn: async () => (await call(api.GET("/auth/session/job-orgs/{id}", { params: { path: { id } } }))).orgs,
    enabled,
  });
}

/** Switches the session to the organization a job was found in; the new session refreshes everything it shows. */
export function useLookIn() {
  const queryClient = useQueryClient();
  return useAction({
    run: switchOrg,
    failed: "Could not switch organization",
    onSuccess: (session) => startSession(queryClient, session),
    refresh: () => [],
  });
}
