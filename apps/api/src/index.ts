// What other packages' tests may take from the API: the app to embed, its configuration's schema and what /metrics
// serves. The API's own test harness is `@conveyor/api/testing`. Nothing else imports
// src/ paths.
export { createApp } from "./app";
export { apiEnvSchema, loadApiConfig } from "./env";
// What /metrics serves, for the test that holds deploy/'s dashboards and alerts to it.
export { createApiMetrics } from "./observability/metrics";
