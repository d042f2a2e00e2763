// Provider callbacks. No user credential: POST /callbacks/mpesa/{job_id}?secret=… is authenticated by the
// per-job secret Conveyor put in the STK push's CallBackURL. The secret stays in the query string, which the
// access log never writes.
import { Router } from "express";
import { recordMpesaCallback } from "../services/callbacks";
import type { RouteDeps } from "./index";

export function callbackRoutes(deps: RouteDeps): Router {
  const router = Router();

  router.post("/callbacks/mpesa/:job_id", async (req, res) => {
    const secret = typeof req.query.secret === "string" ? req.query.secret : undefined;
    await recordMpesaCallback({ deps, jobId: String(req.params.job_id), secret, body: req.body });
    // What Safaricom's C2B callbacks expect; harmless for STK callbacks.
    res.status(200).json({ ResultCode: 0, ResultDesc: "Accepted" });
  });

  return router;
}
