// Prometheus metrics of one API app (SPEC §7), in a registry of its own so several apps can live in one
// process (tests). Labels are bounded: the route PATTERN Express matched (never the raw URL, which carries
// ids), the method, the status, and the job type (built in or registered by an operator). No org or job ids.
import type { Request, RequestHandler, Response } from "express";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The route label of every request Express did not route: unknown paths, and bodies refused before routing. */
export const UNMATCHED_ROUTE = "unmatched";

/** Seconds; from a cached read to a slow streamed list. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type ApiMetrics = {
  registry: Registry;
  /** Times every request and counts created jobs; mount before everything that can answer. */
  observeRequests: RequestHandler;
};

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
  const durationOf = childCache(duration);
  const createdOf = new Map<string, { inc(): void }>();

  const record = (req: Request, res: Response, started: number) => {
    // The endpoints' router is mounted at the root (app.ts), so the route's own path is the whole pattern.
    const route = routePath(req) ?? UNMATCHED_ROUTE;
    const method = route === UNMATCHED_ROUTE && !KNOWN_METHODS.has(req.method) ? "OTHER" : req.method;
    durationOf(method, route, res.statusCode).observe((performance.now() - started) / 1000);
    if (res.statusCode !== 202) return;
    for (const type of createdTypes(req, route) ?? []) {
      let child = createdOf.get(type);
      if (!child) createdOf.set(type, (child = jobsCreated.labels(type)));
      child.inc();
    }
  };

  return {
    registry,
    observeRequests(req, res, next) {
      const started = performance.now();
      res.once("finish", () => record(req, res, started));
      next();
    },
  };
}
