// GET /metrics: Prometheus text format, without a credential, like /healthz (docs/decisions.md, Operability):
// it holds no tenant data, and production deployments keep it off the public load balancer.
import { Router } from "express";
import type { ApiMetrics } from "../observability/metrics";

export function metricsRoutes({ registry }: ApiMetrics): Router {
  const router = Router();
  router.get("/metrics", async (_req, res) => {
    const body = await registry.metrics();
    res.status(200).setHeader("Content-Type", registry.contentType).setHeader("Cache-Control", "no-store").send(body);
  });
  return router;
}
