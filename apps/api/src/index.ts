// What other packages may take from the API: the app to embed or serve, its configuration, and the credentials
// it issues (the test kit signs tokens and makes keys the way the API does). Nothing else imports src/ paths.
export { createApp, createServer } from "./app";
export { systemClock, type AppDeps, type Clock } from "./context";
export { apiEnvSchema, loadApiConfig, usesDevelopmentJwtSecret, type ApiConfig } from "./env";
export { generateApiKey, hashApiKey } from "./services/api-key-secrets";
// The console's test holds its own route list to this one.
export { CONSOLE_PAGES } from "./pages/console";
export { signToken, verifyToken } from "./services/tokens";
// What /metrics serves, for the test that holds deploy/'s dashboards and alerts to it.
export { createApiMetrics } from "./observability/metrics";
