// Prometheus metrics of one API app (docs/reference/operations.md#configuration), in a registry of its own so several apps can live in one
// process (tests). Labels are bounded: the route PATTERN Express matched (never the raw URL, which carries
// ids), the method, the status, and the job type (built in or registered by an operator). No org or job ids.
import type { Request, RequestHandler, Response } from "express";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { TypeUsageTotals } from "@conveyor/db";

/** The route label of every request Express did not route: unknown paths, and bodies refused before routing. */
export const UNMATCHED_ROUTE = "unmatched";

/** Seconds; from a cached read to a slow streamed list. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type ApiMetrics = {
  registry: Registry;
  /** Times every request and counts created jobs; mount before everything that can answer. */
  observeRequests: RequestHandler;
  /**
   * Serves the deployment's usage counters by type (docs/reference/tenants.md#usage-quotas-and-backpressure) from `read`, at most every USAGE_METRICS_MS: the same
   * figures on every replica (they come from Postgres), so aggregate them with max, not sum.
   */
  observeUsage(read: () => Promise<TypeUsageTotals[]>): void;
};

/** How long the usage counters' figures are reused between scrapes. */
export const USAGE_METRICS_MS = 5_000;

/** Reasons a job-creating request is refused for its organization's share (docs/reference/tenants.md#usage-quotas-and-backpressure). */
const REFUSAL_REASONS = new Set(["quota_exceeded", "overloaded", "commit_latency"]);

type Observer = { observe(value: number): void };

/**
 * prom-client hashes a label object on every observe. The API's POST /jobs is benchmarked, so each label
 * combination's child is looked up once and kept: three Map lookups per request, no label object.
 */
function childCache(histogram: Histogram<"method" | "route" | "status_code">) {
  const byMethod = new Map<string, Map<string, Map<number, Observer>>>();
  return (method: string, route: string, status: number): Observer => {
    let byRoute = byMethod.get(method);
    if (!byRoute) byMethod.set(method, (byRoute = new Map<string, Map<number, Observer>>()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map<number, Observer>()));
    let child = byStatus.get(status);
    if (!child) byStatus.set(status, (child = histogram.labels(method, route, String(status))));
    return child;
  };
}

// Node's HTTP parser accepts a fixed list of methods, but only these reach a route here.
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The pattern of the route Express matched, if any (Express types `req.route` as `any`). */
function routePath(req: Request): string | undefined {
  const route: unknown = req.route;
  return typeof route === "object" && route !== null && "path" in route && typeof route.path === "string" ? route.path : undefined;
}

/** Job types a 202 from a job-creating route created (the body passed validation before anything was stored). */
function createdTypes(req: Request, route: string): string[] | null {
  if (req.method !== "POST") return null;
  const body = req.body as { type?: unknown; jobs?: { type?: unknown }[] } | undefined;
  if (route === "/jobs" && typeof body?.type === "string") return [body.type];
  if (route === "/jobs/batch" && Array.isArray(body?.jobs)) return body.jobs.map((job) => String(job.type));
  return null;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const duration = new Histogram({
    name: "conveyor_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its response, by method, route pattern and status.",
    labelNames: ["method", "route", "status_code"] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  const jobsCreated = new Counter({
    name: "conveyor_jobs_created_total",
    help: "Jobs accepted by POST /jobs and POST /jobs/batch (202), by type. Idempotent repeats (200) are not counted.",
    labelNames: ["type"] as const,
    registers: [registry],
  });
  const refused = new Counter({
    name: "conveyor_jobs_refused_total",
    help: "Job-creating requests (POST /jobs, POST /jobs/batch) refused with 429 for the organization's share, by reason: quota_exceeded, overloaded (backpressure on the due backlog) or commit_latency (backpressure on Postgres commit latency; the answer's code is overloaded).",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const durationOf = childCache(duration);
  const createdOf = new Map<string, { inc(): void }>();

  const record = (req: Request, res: Response, started: number) => {
    // The endpoints' router is mounted at the root (app.ts), so the route's own path is the whole pattern.
    const route = routePath(req) ?? UNMATCHED_ROUTE;
    const method = route === UNMATCHED_ROUTE && !KNOWN_METHODS.has(req.method) ? "OTHER" : req.method;
    durationOf(method, route, res.statusCode).observe((performance.now() - started) / 1000);
    if (res.statusCode === 429 && (route === "/jobs" || route === "/jobs/batch")) {
      const code = String(res.locals.refusalReason ?? res.locals.errorCode);
      if (REFUSAL_REASONS.has(code)) refused.labels(code).inc();
    }
    if (res.statusCode !== 202) return;
    for (const type of createdTypes(req, route) ?? []) {
      let child = createdOf.get(type);
      if (!child) createdOf.set(type, (child = jobsCreated.labels(type)));
      child.inc();
    }
  };

  return {
    registry,
    observeUsage(read) {
      let cached: { at: number; rows: Promise<TypeUsageTotals[]> } | null = null;
      const rows = () => {
        if (!cached || Date.now() - cached.at >= USAGE_METRICS_MS) cached = { at: Date.now(), rows: read() };
        return cached.rows;
      };
      const counter = (field: Exclude<keyof TypeUsageTotals, "type">, name: string, help: string) =>
        new Counter({
          name,
          help,
          labelNames: ["type"] as const,
          registers: [registry],
          async collect() {
            this.reset();
            for (const row of await rows().catch(() => [])) this.inc({ type: row.type }, row[field]);
          },
        });
      counter(
        "jobs_created",
        "conveyor_usage_jobs_created_total",
        "Jobs created by every organization, by type (usage, docs/reference/tenants.md#usage-quotas-and-backpressure; from Postgres, the same on every replica).",
      );
      counter("attempts_started", "conveyor_usage_attempts_started_total", "Attempts started, by type (usage; the same on every replica).");
      counter("attempt_seconds", "conveyor_usage_attempt_seconds_total", "Seconds attempts ran, by type (usage; the same on every replica).");
      counter(
        "webhook_deliveries",
        "conveyor_usage_webhook_deliveries_total",
        "Webhook delivery attempts, by the type of the job the event is about (usage; the same on every replica).",
      );
      counter("payload_bytes", "conveyor_usage_payload_bytes_total", "Payload bytes of the jobs created, by type (usage; the same on every replica).");
    },
    observeRequests(req, res, next) {
      const started = performance.now();
      res.once("finish", () => record(req, res, started));
      next();
    },
  };
}
