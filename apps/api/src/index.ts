// What other packages' tests may take from the API: the app to embed, its configuration's schema, the console's
// page list and what /metrics serves. The API's own test harness is `@conveyor/api/testing`. Nothing else imports
// src/ paths.
export { createApp } from "./app";
export { apiEnvSchema, loadApiConfig } from "./env";
// The console's test holds its own route list to this one.
export { CONSOLE_PAGES } from "./pages/console";
// What /metrics serves, for the test that holds deploy/'s dashboards and alerts to it.
export { createApiMetrics } from "./observability/metrics";
