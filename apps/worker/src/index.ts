// What other packages and the root tests may take from the worker: its configuration schema, loader and type.
// The process itself starts from main.ts; nothing imports src/ paths.
export { loadWorkerConfig, workerEnvSchema, type WorkerConfig } from "./env";
export { handlerEnv } from "./handlers/settings";
// What /metrics serves, for the tests that hold deploy/'s dashboards, alerts and KEDA queries to it.
export { createWorkerMetrics } from "./process/metrics";
