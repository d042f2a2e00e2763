// Live job updates (SPEC §10): one `GET /events` stream per logged-in console. Each event patches the job's row
// wherever a list or a job's dependency graph shows it and refreshes that job's page; a new job refreshes first
// pages (at most once a second).
import { useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import type { ConveyorEvent } from "@conveyor/client";
import { api, reportUnauthorized } from "./api";

export type JobPage<Row> = { items: Row[]; next: string | null };

const LIST_FIELDS = [
  "status",
  "retries",
  "max_retries",
  "updated_at",
  "run_at",
  "priority",
  "cancel_requested_at",
  "started_at",
  "finished_at",
  "progress",
] as const;

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

function applyEvent(queryClient: QueryClient, event: ConveyorEvent, refreshLists: () => void): void {
  const data = event.data;
  for (const [key, page] of queryClient.getQueriesData<JobPage<Record<string, unknown>>>({ queryKey: ["jobs"] })) {
    if (!page?.items.some((row) => row.id === event.job_id)) continue;
    // A list filtered by status loses a row whose new status it does not show.
    const statuses = (key[1] as { status?: string } | undefined)?.status?.split(",");
    if (statuses && typeof data.status === "string" && !statuses.includes(data.status)) {
      queryClient.setQueryData<JobPage<Record<string, unknown>>>(key, { ...page, items: page.items.filter((row) => row.id !== event.job_id) });
      continue;
    }
    const patch = rowPatch(event);
    queryClient.setQueryData<JobPage<Record<string, unknown>>>(key, {
      ...page,
      items: page.items.map((row) => (row.id === event.job_id ? { ...row, ...patch } : row)),
    });
  }
  // A dependency graph on a job's page (["job", id, "graph"]) shows the same fields of each of its jobs.
  for (const [key, graph] of queryClient.getQueriesData<{ nodes: Record<string, unknown>[] }>({
    queryKey: ["job"],
    predicate: (query) => query.queryKey[2] === "graph",
  })) {
    if (!graph?.nodes.some((node) => node.id === event.job_id)) continue;
    const patch = rowPatch(event);
    queryClient.setQueryData(key, { ...graph, nodes: graph.nodes.map((node) => (node.id === event.job_id ? { ...node, ...patch } : node)) });
  }
  void queryClient.invalidateQueries({ queryKey: ["job", event.job_id] });
  if (event.type === "job.created") refreshLists();
}

export function useLiveJobEvents(): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Only first pages (no cursor) gain rows at the top; later pages keep their place.
    const refreshLists = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        void queryClient.invalidateQueries({ queryKey: ["jobs"], predicate: (query) => !(query.queryKey[1] as { cursor?: string } | undefined)?.cursor });
      }, 1000);
    };
    let reconnected = false;
    void api.events({
      signal: controller.signal,
      onEvent: (event) => applyEvent(queryClient, event, refreshLists),
      // After a reconnect, what changed meanwhile is read again.
      onOpen: () => {
        if (reconnected) void queryClient.invalidateQueries({ queryKey: ["jobs"] });
        reconnected = true;
      },
      onRefused: (status) => {
        if (status === 401) reportUnauthorized();
      },
    });
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [queryClient]);
}
