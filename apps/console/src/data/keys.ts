// The console's query keys, one factory per resource (TanStack Query's key factory): every page reads and every
// action and live event refreshes through these, so a key's shape is written once. Each resource's keys start with
// its `all`, which refreshes all of them; the jobs lists are ["jobs", "list", search], and live.ts finds them by
// `keys.jobs.lists()` and reads a list's search by `keys.jobs.searchOf`: only this module reads the shape of a key.
import type { QueryKey } from "@tanstack/react-query";
import type { JobFilter, JobSearch } from "../pages/job-search";

export const keys = {
  session: ["session"] as const,
  /** Every query but the session's: what another session (a login, a switch, a logout) drops. */
  allButSession: () => ({ predicate: (query: { queryKey: QueryKey }) => query.queryKey[0] !== keys.session[0] }),
  jobs: {
    all: ["jobs"] as const,
    /** Every page of the list, whatever its filters. */
    lists: () => ["jobs", "list"] as const,
    list: (search: JobSearch) => ["jobs", "list", search] as const,
    /** The search of a list's key (one of `lists()`). */
    searchOf: (key: QueryKey) => (key as ReturnType<typeof keys.jobs.list>)[2],
    /** Failures grouped by error under the list's filters. */
    failures: (filter: object) => ["jobs", "failures", filter] as const,
    /** How many jobs a bulk action's filter holds. */
    count: (filter: JobFilter) => ["jobs", "count", filter] as const,
    stats: (window: string) => ["jobs", "stats", window] as const,
  },
  job: {
    all: ["job"] as const,
    detail: (id: string) => ["job", id] as const,
    logs: (id: string) => ["job", id, "logs"] as const,
    attempts: (id: string) => ["job", id, "attempts"] as const,
    graph: (id: string) => ["job", id, "graph"] as const,
    /** Every job's dependency graph (live events patch the jobs each one shows). */
    graphs: () => ({ queryKey: ["job"] as const, predicate: (query: { queryKey: readonly unknown[] }) => query.queryKey[2] === "graph" }),
    artifact: (id: string) => ["job", id, "artifact"] as const,
    output: (id: string) => ["job", id, "output"] as const,
    /** The session's other organizations that have this job id (its organization has none). */
    elsewhere: (id: string) => ["job", id, "elsewhere"] as const,
  },
  retries: { all: ["retries"] as const },
  savedViews: { all: ["saved-views"] as const },
  queueActivity: { all: ["queues", "activity"] as const },
  queues: { all: ["queues"] as const },
  workers: { all: ["workers"] as const },
  alerts: { all: ["alerts"] as const, list: () => ["alerts", "list"] as const, rules: () => ["alerts", "rules"] as const },
  jobTypes: { all: ["job-types"] as const },
  rateLimits: { all: ["rate-limits"] as const },
  schedules: { all: ["schedules"] as const },
  invites: { all: ["invites"] as const },
  apiKeys: { all: ["api-keys"] as const },
  webhookEndpoints: {
    all: ["webhook-endpoints"] as const,
    /** Every list of an endpoint's deliveries, whatever its filters. */
    deliveries: (endpointId: string | undefined) => ["webhook-endpoints", endpointId, "deliveries"] as const,
    filteredDeliveries: (endpointId: string | undefined, filter: object) => ["webhook-endpoints", endpointId, "deliveries", filter] as const,
  },
  auditLog: { all: ["audit-log"] as const, list: (search: object) => ["audit-log", search] as const },
  sso: { all: ["sso"] as const },
  waitpoints: { all: ["waitpoints"] as const, waiting: () => ["waitpoints", "waiting"] as const },
  usage: {
    byDay: (from: string, to: string) => ["usage", "day", from, to] as const,
    byType: (from: string, to: string) => ["usage", "type", from, to] as const,
  },
  quotas: { all: ["quotas"] as const },
  members: { all: ["members"] as const, every: () => ["members", "all"] as const },
};
