// The console's pages as paths, in a module of their own with nothing to import: the router (routes.tsx) must
// declare exactly these — the compiler checks it — and the API serves the console's page for a browser
// navigation to each of them (apps/api/src/pages/console: CONSOLE_ROUTES), which test/routes.test.ts checks.
// A page added to one list and not the other fails one of the two.
export const CONSOLE_PATHS = [
  "/",
  "/login",
  "/signup",
  "/overview",
  "/jobs",
  "/jobs/$id",
  "/queues",
  "/retries",
  "/workers",
  "/alerts",
  "/job-types",
  "/schedules",
  "/waitpoints",
  "/team",
  "/api-keys",
  "/webhooks",
  "/account",
  "/audit-log",
  "/usage",
  "/sso",
] as const;

export type ConsolePath = (typeof CONSOLE_PATHS)[number];
