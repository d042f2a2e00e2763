// The web console's pages, written once (issue 46 #6): the console's router must declare exactly these (its routes.tsx
// is typed by them), and the API answers a browser navigation to each with the console's page (apps/api/src/pages/
// console). `$name` is a path parameter. Nothing to import: the console takes it through its own subpath export
// (@conveyor/contracts/console-pages), so nothing else of this package enters the browser's bundle.
export const CONSOLE_PAGES = [
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

export type ConsolePage = (typeof CONSOLE_PAGES)[number];
