// Liveness and readiness. /readyz is what a load balancer should route on: it fails while Postgres or
// Redis is unreachable, and while Redis would evict keys (which can silently drop queued jobs).
import { Router } from "express";
import { pingDatabase } from "@conveyor/db";
import { checkRedis } from "@conveyor/queue";
import type { AppDeps } from "../context";
import { AppError } from "../http/errors";

export function healthRoutes({ db, redis }: AppDeps): Router {
  const router = Router();

  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });

  router.get("/readyz", async (_req, res) => {
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
    res.json({ status: "ready", checks: { postgres: "ok", redis: "ok", redis_maxmemory_policy: redisHealth.ok ? redisHealth.evictionPolicy : null } });
  });

  return router;
}
