// Health and metrics (docs/reference/operations.md#configuration), for load balancers and Prometheus. No credential: they hold no tenant data.
// /readyz is what a load balancer should gate on: it fails while Postgres or Redis is unreachable, and while
// Redis would evict keys (which can silently drop queued jobs).
import { pingDatabase } from "@conveyor/db";
import { checkRedis } from "@conveyor/queue";
import { endpoint } from "../declarations/endpoint";
import { AppError } from "../services/infrastructure/errors";

const text = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });

export const operationsEndpoints = [
  endpoint({
    method: "get",
    path: "/healthz",
    operationId: "healthz",
    tag: "Operations",
    summary: "Liveness",
    description: "200 while the process runs; for container health checks.",
    access: "public",
    responses: { 200: { description: "Up.", json: { component: "Health", example: { status: "ok" } } } },
    errors: [500],
    handle: () => ({ json: { status: "ok" } }),
  }),
  endpoint({
    method: "get",
    path: "/readyz",
    operationId: "readyz",
    tag: "Operations",
    summary: "Readiness",
    description: "200 while Postgres and Redis answer and Redis will not evict keys; route traffic on it. 503 names each failing dependency in `details`.",
    access: "public",
    responses: {
      200: {
        description: "Ready.",
        json: { component: "Ready", example: { status: "ready", checks: { postgres: "ok", redis: "ok", redis_maxmemory_policy: "noeviction" } } },
      },
    },
    errors: [500, 503],
    async handle(_input, { db, redis }) {
      const [postgres, redisHealth] = await Promise.all([
        pingDatabase(db.pool).then(
          () => null,
          (error: Error) => `Postgres is unreachable: ${error.message}`,
        ),
        checkRedis(redis),
      ]);
      const problems = [
        ...(postgres ? [{ path: "postgres", message: postgres }] : []),
        ...(redisHealth.ok ? [] : [{ path: "redis", message: redisHealth.reason }]),
      ];
      if (problems.length) throw new AppError("unavailable", "Not ready: a dependency is unavailable.", problems);
      return { json: { status: "ready", checks: { postgres: "ok", redis: "ok", redis_maxmemory_policy: redisHealth.ok ? redisHealth.evictionPolicy : null } } };
    },
  }),
  endpoint({
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    tag: "Operations",
    summary: "Prometheus metrics",
    description:
      "Prometheus text format: HTTP request durations by route pattern and status, jobs created by type, and process metrics. " +
      "No credential, like /healthz: it holds no tenant data; keep it off the public load balancer. See docs/operations.md.",
    access: "public",
    responses: { 200: text("Metrics in Prometheus text format 0.0.4.", "text/plain") },
    errors: [500],
    async handle({ res }, deps) {
      const { contentType, body } = await deps.metrics();
      res.status(200).setHeader("Content-Type", contentType).setHeader("Cache-Control", "no-store").send(body);
    },
  }),
];
