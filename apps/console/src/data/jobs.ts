// The organization's jobs as lists: a page of the list for a search (the route starts it, the API's first page hands
// it over), failures grouped by error, how many match a filter, the overview's figures, and the requests on many
// jobs at once (POST /jobs/bulk, repeated while the API says has_more) or a new one (a test run).
import { keepPreviousData, queryOptions, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ResponseBody } from "@conveyor/client";
import { api, call, callPage } from "../api";
import { jobsListParams, type JobFilter, type JobSearch } from "../pages/job-search";
import { keys } from "./keys";

/** One page of the list for a search (the route starts it while the session is checked; the page reads it). */
export const jobsListQuery = (search: JobSearch) =>
  queryOptions({
    queryKey: keys.jobs.list(search),
    // With each job's last error, shown in a failed row.
    queryFn: () => callPage(api.GET("/jobs", { params: { query: jobsListParams(search) } })),
  });

/** The list's page for a search, the last one kept on screen while the next loads. */
export function useJobsList(search: JobSearch, { enabled }: { enabled: boolean }) {
  return useQuery({ ...jobsListQuery(search), placeholderData: keepPreviousData, enabled });
}

/** Reads every jobs list again (live updates resumed). */
export function useRefreshLists() {
  const queryClient = useQueryClient();
  return () => void queryClient.invalidateQueries({ queryKey: keys.jobs.lists() });
}

const COUNT_LIMIT = 10_000;
const COUNT_PAGE = 1000;

/** How many jobs match `filter`, counted a page at a time up to COUNT_LIMIT. */
async function countMatching(filter: JobFilter): Promise<{ count: number; more: boolean }> {
  let count = 0;
  let cursor: string | undefined;
  while (count < COUNT_LIMIT) {
    const page = await callPage(api.GET("/jobs", { params: { query: { ...filter, limit: COUNT_PAGE, cursor } } }));
    count += page.items.length;
    if (!page.next) return { count, more: false };
    cursor = page.next;
  }
  return { count, more: true };
}

/** How many jobs match `filter` (counted only while `enabled`: all matching jobs are selected). */
export function useMatchingCount(filter: JobFilter, { enabled }: { enabled: boolean }) {
  return useQuery({ queryKey: keys.jobs.count(filter), queryFn: () => countMatching(filter), enabled, staleTime: 0 });
}

export type BulkAction = "cancel" | "replay";
/** Calls of one bulk action before the console stops and says so (each handles up to 10,000 jobs). */
const MAX_ROUNDS = 100;

/** A bulk action on jobs by id (one call), or on every job matching a filter (repeated while more remain). */
export async function bulkJobs(input: { action: BulkAction; ids: string[] } | { action: BulkAction; filter: JobFilter }) {
  let matched = 0;
  let affected = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await call(api.POST("/jobs/bulk", { body: input }));
    matched += result.matched;
    affected += result.affected;
    if (!result.has_more || "ids" in input) break;
  }
  return { matched, affected };
}
/** What a bulk action reads again. */
export const bulkRefresh = () => [keys.jobs.all];

export type FailureGroup = ResponseBody<"/jobs/failures", "get">["groups"][number];
/** The filters GET /jobs/failures takes. */
export type GroupFilter = Pick<JobFilter, "type" | "created_after" | "created_before" | "schedule_id">;

export function useFailureGroups(filter: GroupFilter) {
  return useQuery({
    queryKey: keys.jobs.failures(filter),
    queryFn: () => call(api.GET("/jobs/failures", { params: { query: { ...filter, limit: 100 } } })),
  });
}

export type StatsWindow = "hour" | "day";

/** The overview's figures over a window, read again every 10 s. */
export function useJobStats(window: StatsWindow) {
  return useQuery({
    queryKey: keys.jobs.stats(window),
    queryFn: () => call(api.GET("/jobs/stats", { params: { query: { window } } })),
    refetchInterval: 10_000,
  });
}

/** A new job (the console's test run); the lists gain it. */
export const enqueueJob = (input: { type: string; payload: Record<string, unknown> }) => call(api.POST("/jobs", { body: input as never }));
export const enqueueRefresh = () => [keys.jobs.all];
