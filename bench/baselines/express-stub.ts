// Baseline for POST /jobs and GET /jobs: an Express 5 server that only answers (202 for POST /jobs, a canned
// 100-item page for GET /jobs), with nothing behind it. Conveyor's figures are reported as ratios to this.
import express from "express";

const port = Number(process.env.PORT);
const page = JSON.stringify(
  Array.from({ length: 100 }, (_, i) => ({
    id: `01a1ff8d-24b1-77de-a303-${String(i).padStart(12, "0")}`,
    type: "webhook",
    status: "done",
    retries: 0,
    max_retries: 0,
    created_at: "2026-11-21T19:20:02.473Z",
    updated_at: "2026-11-21T19:20:02.527Z",
  })),
);

const app = express();
app.post("/jobs", (_req, res) => {
  res.status(202).json({ id: "01a1ff8d-24b1-77de-a303-e1fabda2f754", status: "pending" });
});
app.get("/jobs", (_req, res) => {
  res.status(200).type("application/json").send(page);
});
app.get("/healthz", (_req, res) => {
  res.json({ status: "ok" });
});
app.listen(port, "127.0.0.1");
