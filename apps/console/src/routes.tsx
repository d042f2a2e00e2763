// The console's routes (TanStack Router, declared in code). Their paths are the console's pages, CONSOLE_PAGES
// (@conveyor/contracts/console-pages, the one list), which the compiler holds this tree to and the API serves the
// console's page at, so a browser navigation to each of them gets it. Every page but login and signup needs a session; without one the person logs
// in and comes back to the same address.
import type { ConsolePage } from "@conveyor/contracts/console-pages";
import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Outlet, redirect, type RouterHistory } from "@tanstack/react-router";
import { takeFirstPage } from "./first-page";
import { Shell } from "./shell";
import { LoginPage, SignupPage } from "./pages/auth";
import { parseAuditSearch } from "./pages/audit-search";
import { jobsListQuery } from "./data/jobs";
import { JobsPage, parseJobSearch } from "./pages/jobs";
import { NotFound } from "./pages/not-found";
import { PageTitle } from "./page-title";
import { safeRedirect, sessionQuery } from "./session";

type Context = { queryClient: QueryClient };

const root = createRootRouteWithContext<Context>()({
  component: () => (
    <>
      <PageTitle />
      <Outlet />
    </>
  ),
  notFoundComponent: NotFound,
});

const redirectSearch = (search: Record<string, unknown>): { redirect?: string } => (typeof search.redirect === "string" ? { redirect: search.redirect } : {});
/** The login page also says why a single sign-on came back refused (`sso_error`, set by the API). */
const loginSearch = (search: Record<string, unknown>): { redirect?: string; sso_error?: string } => ({
  ...redirectSearch(search),
  ...(typeof search.sso_error === "string" ? { sso_error: search.sso_error } : {}),
});

const login = createRoute({
  getParentRoute: () => root,
  path: "/login",
  validateSearch: loginSearch,
  beforeLoad: async ({ context, search }) => {
    if (await context.queryClient.ensureQueryData(sessionQuery)) throw redirect({ href: safeRedirect(search.redirect) });
  },
  component: LoginPage,
});

const signup = createRoute({ getParentRoute: () => root, path: "/signup", component: SignupPage });

/**
 * Every page behind a session, inside the console's frame (navigation, organization, account menu). The session is
 * checked in a loader rather than in beforeLoad: the loaders of all matched routes run together, so a page's first
 * data (the jobs list) is already on its way while the session is read. Nothing renders before both are settled,
 * and a page's request made without a live session is a 401 that changes nothing (the redirect below wins).
 */
const app = createRoute({
  getParentRoute: () => root,
  id: "app",
  loader: async ({ context, location }) => {
    const session = await context.queryClient.ensureQueryData(sessionQuery);
    if (!session) throw redirect({ to: "/login", search: { redirect: location.href } });
  },
  component: Shell,
});

const index = createRoute({
  getParentRoute: () => app,
  path: "/",
  beforeLoad: () => {
    throw redirect({ to: "/overview" });
  },
});

const overview = createRoute({ getParentRoute: () => app, path: "/overview", component: lazyRouteComponent(() => import("./pages/overview"), "OverviewPage") });
const jobs = createRoute({
  getParentRoute: () => app,
  path: "/jobs",
  validateSearch: parseJobSearch,
  loaderDeps: ({ search }) => search,
  // Started, not awaited: the page shows its frame at once and its rows when they come. On arrival the API may have
  // answered the page's first request into the HTML already (first-page.ts): then that answer is the list's data.
  loader: ({ context, deps }) => {
    if (deps.view === "failures") return;
    const query = jobsListQuery(deps);
    const first = takeFirstPage(parseJobSearch(deps));
    if (first) context.queryClient.setQueryData(query.queryKey, first);
    else void context.queryClient.prefetchQuery(query);
  },
  component: JobsPage,
});
const job = createRoute({ getParentRoute: () => app, path: "/jobs/$id", component: lazyRouteComponent(() => import("./pages/job"), "JobPage") });
const queues = createRoute({ getParentRoute: () => app, path: "/queues", component: lazyRouteComponent(() => import("./pages/queues"), "QueuesPage") });
const retries = createRoute({ getParentRoute: () => app, path: "/retries", component: lazyRouteComponent(() => import("./pages/retries"), "RetriesPage") });
const workers = createRoute({ getParentRoute: () => app, path: "/workers", component: lazyRouteComponent(() => import("./pages/workers"), "WorkersPage") });
const alerts = createRoute({ getParentRoute: () => app, path: "/alerts", component: lazyRouteComponent(() => import("./pages/alerts"), "AlertsPage") });
const jobTypes = createRoute({
  getParentRoute: () => app,
  path: "/job-types",
  component: lazyRouteComponent(() => import("./pages/job-types"), "JobTypesPage"),
});
const schedules = createRoute({
  getParentRoute: () => app,
  path: "/schedules",
  component: lazyRouteComponent(() => import("./pages/schedules"), "SchedulesPage"),
});
const waitpoints = createRoute({
  getParentRoute: () => app,
  path: "/waitpoints",
  component: lazyRouteComponent(() => import("./pages/waitpoints"), "WaitpointsPage"),
});
const team = createRoute({ getParentRoute: () => app, path: "/team", component: lazyRouteComponent(() => import("./pages/team"), "TeamPage") });
const apiKeys = createRoute({ getParentRoute: () => app, path: "/api-keys", component: lazyRouteComponent(() => import("./pages/api-keys"), "ApiKeysPage") });
const webhooks = createRoute({
  getParentRoute: () => app,
  path: "/webhooks",
  component: lazyRouteComponent(() => import("./pages/webhooks"), "WebhooksPage"),
});
const auditLog = createRoute({
  getParentRoute: () => app,
  path: "/audit-log",
  validateSearch: parseAuditSearch,
  component: lazyRouteComponent(() => import("./pages/audit-log"), "AuditLogPage"),
});
const usage = createRoute({ getParentRoute: () => app, path: "/usage", component: lazyRouteComponent(() => import("./pages/usage"), "UsagePage") });
const sso = createRoute({ getParentRoute: () => app, path: "/sso", component: lazyRouteComponent(() => import("./pages/sso"), "SsoPage") });
const account = createRoute({ getParentRoute: () => app, path: "/account", component: lazyRouteComponent(() => import("./pages/account"), "AccountPage") });

const tree = root.addChildren([
  login,
  signup,
  app.addChildren([
    index,
    overview,
    jobs,
    job,
    queues,
    retries,
    workers,
    alerts,
    jobTypes,
    schedules,
    waitpoints,
    team,
    apiKeys,
    webhooks,
    auditLog,
    usage,
    sso,
    account,
  ]),
]);

/** Every full path in a route tree (the router's own types carry each route's children). */
type PathsOf<R> = R extends { fullPath: infer P; types: { children: infer C } } ? P | (C extends readonly (infer Child)[] ? PathsOf<Child> : never) : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
/** Fails to compile unless the tree's paths are exactly CONSOLE_PAGES. */
export type RoutesAreConsolePages = Assert<Same<PathsOf<typeof tree>, ConsolePage>>;

/**
 * The console's router. The API's drawing of /jobs (first-page-server.tsx) passes a memory `history` at the address
 * asked for, and no scroll restoration (on a server the router writes it as an inline script, which the page's
 * policy refuses); the page uses the browser's history and restores scrolling (the defaults).
 */
export function createConsoleRouter(queryClient: QueryClient, options: { history?: RouterHistory; scrollRestoration?: boolean } = {}) {
  return createRouter({ routeTree: tree, context: { queryClient }, defaultPreload: "intent", scrollRestoration: true, ...options });
}

declare module "@tanstack/react-router" {
  // eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- module augmentation merges interfaces only
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
