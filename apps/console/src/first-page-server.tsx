// What the API writes into the console's HTML for a browser arriving at /jobs (apps/api/src/pages/console/
// first-page.ts): the page itself — the console's frame (header, navigation, organization and account), the jobs
// page's heading, saved views, filters and its list's first page — so its rows are on screen with the page's first
// paint, where the page will draw them, instead of after the console's script has loaded, run and asked for them.
// Built for Node into dist/server/first-page.cjs (vite build --ssr) from the same sources as the page: the route tree
// (routes.tsx) with its Shell and JobsPage, rendered at the address asked for, with a query cache holding what the
// API answered (the session's user, organization and role; the list's page). The list's request is jobsListParams
// of the search the router reads from the URL. The page takes the answer over (first-page.ts): its first render
// shows the same frame and rows from the same data, and the server's copy is removed then. What this file exports is
// the contract the API holds it to (server-contract.d.ts, ConsoleServerBundle): each export is typed by it.
import { MantineProvider } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createMemoryHistory, defaultParseSearch, RouterProvider } from "@tanstack/react-router";
import { renderToStaticMarkup } from "react-dom/server";
import type { JobRow } from "./pages/jobs-rows";
import { jobsListQuery } from "./data/jobs";
import { jobsListParams, parseJobSearch, type JobSearch } from "./pages/job-search";
import { createConsoleRouter } from "./routes";
import type { ConsoleServerBundle } from "./server-contract";
import { sessionQuery, type Session } from "./session";
import { cssVariables, theme } from "./theme";
import { withClock } from "./ui/format";

import { CLOCK_COOKIE as clockCookie, FIRST_PAGE_DATA_ID as firstPageDataId, FIRST_ROWS_ID as firstRowsId } from "./first-page";

export const CLOCK_COOKIE: ConsoleServerBundle["CLOCK_COOKIE"] = clockCookie;
export const FIRST_PAGE_DATA_ID: ConsoleServerBundle["FIRST_PAGE_DATA_ID"] = firstPageDataId;
export const FIRST_ROWS_ID: ConsoleServerBundle["FIRST_ROWS_ID"] = firstRowsId;

/**
 * The page's search for a /jobs address's query string (`?status=failed&…`, as the router parses it), and the
 * query of GET /jobs the page asks for it; null when the page shows no list (the failures view).
 */
export const firstListRequest: ConsoleServerBundle["firstListRequest"] = (queryString) => {
  const search = parseJobSearch(defaultParseSearch(queryString));
  if (search.view === "failures") return null;
  const query = Object.fromEntries(Object.entries(jobsListParams(search)).filter(([, value]) => value !== undefined)) as Record<string, string | number>;
  return { search, query };
};

/**
 * The jobs page at `address` (`/jobs?…`) as static HTML (no handlers: the page's script brings them) — its frame for
 * `session`, and the list's `first` page — with its times written for the browser's language and time zone (`clock`:
 * Accept-Language, and the zone the page remembers in the CLOCK_COOKIE) as the page will write them. Null when the
 * address does not end on the jobs list with that page (nothing is drawn then; the page draws itself).
 */
export const renderFirstPage: ConsoleServerBundle["renderFirstPage"] = async (input, clock = {}) => {
  // Answers only from what it is given: nothing here asks the API (nothing is stale, nothing is fetched).
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false, enabled: false } } });
  try {
    // The token stays out: nothing drawn shows it, and this page's data is the API's own answers only.
    const session: Session = { ...input.session, csrf_token: "" };
    queryClient.setQueryData(sessionQuery.queryKey, session);
    // The search firstListRequest read and the page GET /jobs answered for it, handed back as they came.
    queryClient.setQueryData(jobsListQuery(input.first.search as JobSearch).queryKey, input.first.page as { items: JobRow[]; next: string | null });
    const router = createConsoleRouter(queryClient, { history: createMemoryHistory({ initialEntries: [input.address] }), scrollRestoration: false });
    await router.load();
    const shown = router.state.matches.at(-1);
    if (shown?.routeId !== "/app/jobs" || shown.status !== "success" || !queryClient.getQueryData(jobsListQuery(shown.search as JobSearch).queryKey))
      return null;
    return withClock(clock, () =>
      renderToStaticMarkup(
        <MantineProvider theme={theme} cssVariablesResolver={cssVariables} defaultColorScheme="light">
          <QueryClientProvider client={queryClient}>
            <RouterProvider router={router} />
          </QueryClientProvider>
        </MantineProvider>,
      ),
    );
  } finally {
    queryClient.clear();
  }
};
