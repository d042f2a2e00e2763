// Live job updates (docs/reference/events.md#events): one `GET /events` stream per tab, of the organization the tab shows — opened again when
// it changes (a switch here or in another tab), so the console never listens to another one. Each event is read
// against every jobs list through the lists' own keys and one matcher shared with the API's filter semantics
// (jobMatchesFilter): a row that no longer belongs leaves its list, a row that still does takes the event's fields,
// and a list the event's fields cannot decide (a search, due now or later) is read again; a new job refreshes the
// first pages it may belong in (at most once a second). The job's page and its dependency graphs follow too.
import { useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { jobMatchesFilter, type ConveyorEvent } from "@conveyor/client";
import { JOB_EVENT_FIELDS, JOB_ITEM_FIELDS } from "@conveyor/contracts/job-shape";
import { api, reportUnauthorized } from "./api";
import { keys } from "./data/keys";
import type { JobSearch } from "./pages/job-search";
import { listsPaused } from "./live-pause";
import { orgChangedElsewhere } from "./session";

export type JobPage<Row> = { items: Row[]; next: string | null };

/** The fields of a list's row (or a graph's node) that an event's data carries: what an event may change in it. */
const LIST_FIELDS = JOB_ITEM_FIELDS.filter((field) => (JOB_EVENT_FIELDS as readonly string[]).includes(field));

/**
 * What an event changes in a row of a list or a graph: the fields its data (the job as it was) carries, and no
 * `waiting_for` after a change of status (events do not carry it: it is a reading of the present), rather than a
 * stale one, until the list is read again.
 */
function rowPatch(event: ConveyorEvent): Record<string, unknown> {
  const data = event.data;
  const patch: Record<string, unknown> = Object.fromEntries(LIST_FIELDS.filter((field) => field in data).map((field) => [field, data[field]]));
  if ("status" in data) patch.waiting_for = null;
  return patch;
}

/** The job an event describes, as the matcher reads it (the event's data is the job as it was then). */
function eventJob(event: ConveyorEvent, row?: Record<string, unknown>) {
  const data = { ...row, ...event.data };
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    id: event.job_id,
    status: text(data.status),
    type: text(data.type),
    created_at: text(data.created_at),
    finished_at: "finished_at" in data ? (text(data.finished_at) ?? null) : undefined,
    schedule_id: "schedule_id" in data ? (text(data.schedule_id) ?? null) : undefined,
  };
}

/** The filter part of a list's search (its page, order and view are not filters). */
function filterOfSearch(search: JobSearch) {
  const { cursor: _cursor, order: _order, view: _view, ...filter } = search;
  return filter;
}

/** How long a tab waits before asking again for a stream the API refused (other than for an ended session). */
const REFUSED_RETRY_MS = 5_000;

type Refresh = (key: readonly unknown[]) => void;

export function applyEvent(queryClient: QueryClient, event: ConveyorEvent, refresh: Refresh): void {
  // Lists paused by the person (live-pause.ts) stay as they are; the job's own page and graphs still follow.
  const lists = listsPaused() ? [] : queryClient.getQueriesData<JobPage<Record<string, unknown>>>({ queryKey: keys.jobs.lists() });
  for (const [key, page] of lists) {
    const search = keys.jobs.searchOf(key);
    const row = page?.items.find((item) => item.id === event.job_id);
    const verdict = jobMatchesFilter(eventJob(event, row), filterOfSearch(search));
    if (!row) {
      // A job the list does not show: a first page may gain it — a new job, or one whose new status came to match.
      const byState = Boolean(search.status || search.due || search.failure_group);
      if (verdict !== "no" && !search.cursor && (event.type === "job.created" || byState)) refresh(key);
      continue;
    }
    if (verdict === "no") {
      queryClient.setQueryData<JobPage<Record<string, unknown>>>(key, { ...page!, items: page!.items.filter((item) => item.id !== event.job_id) });
      continue;
    }
    const patch = rowPatch(event);
    queryClient.setQueryData<JobPage<Record<string, unknown>>>(key, {
      ...page!,
      items: page!.items.map((item) => (item.id === event.job_id ? { ...item, ...patch } : item)),
    });
    // Still shown, but whether it belongs depends on what the event does not say (a search, due now or later).
    if (verdict === "unknown") refresh(key);
  }
  // A dependency graph on a job's page shows the same fields of each of its jobs.
  for (const [key, graph] of queryClient.getQueriesData<{ nodes: Record<string, unknown>[] }>(keys.job.graphs())) {
    if (!graph?.nodes.some((node) => node.id === event.job_id)) continue;
    const patch = rowPatch(event);
    queryClient.setQueryData(key, { ...graph, nodes: graph.nodes.map((node) => (node.id === event.job_id ? { ...node, ...patch } : node)) });
  }
  void queryClient.invalidateQueries({ queryKey: keys.job.detail(event.job_id) });
  // The Retries view gains a job that failed an attempt, and loses one that started again, was run now or cancelled.
  if (event.type !== "job.created" && !listsPaused()) refresh(keys.retries.all);
}

/**
 * The tab's one event stream, of organization `orgId`: closed and opened again when it changes. An event that arrives
 * once another tab has switched organization (before this tab has followed) is not applied: it is not of the
 * organization shown.
 */
export function useLiveJobEvents(orgId: string): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const pending = new Map<string, readonly unknown[]>();
    // Each list refreshed at most once a second, however many events ask.
    const refresh: Refresh = (key) => {
      pending.set(JSON.stringify(key), key);
      timer ??= setTimeout(() => {
        timer = undefined;
        for (const key of pending.values()) void queryClient.invalidateQueries({ queryKey: key, exact: true });
        pending.clear();
      }, 1000);
    };
    let reconnected = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const open = () =>
      void api.events({
        signal: controller.signal,
        onEvent: (event) => {
          if (controller.signal.aborted || orgChangedElsewhere()) return;
          applyEvent(queryClient, event, refresh);
        },
        // After a reconnect, what changed meanwhile is read again.
        onOpen: () => {
          if (reconnected) void queryClient.invalidateQueries({ queryKey: keys.jobs.all });
          reconnected = true;
        },
        // A 401 ends the session; any other refusal (too many streams, a proxy's 4xx) is not the tab's last word:
        // asked again a while later, rather than leaving the tab without live updates for the rest of its life.
        onRefused: (status) => {
          if (status === 401) return reportUnauthorized();
          if (!controller.signal.aborted) retry = setTimeout(open, REFUSED_RETRY_MS);
        },
      });
    open();
    return () => {
      controller.abort();
      clearTimeout(timer);
      clearTimeout(retry);
    };
  }, [queryClient, orgId]);
}
