// What the API writes into the console's HTML for a browser arriving at /jobs (apps/api/src/pages/console/
// first-page.ts): the list's first page, so its rows are on screen with the page's first paint instead of after the
// console's script has loaded, run and asked for them. Built for Node into dist/server/first-page.cjs (vite build
// --ssr), from the same sources as the page: the list's request is jobsListParams of the search the page's router
// reads from the URL, and the rows are the page's own table (jobs-table.tsx). The page takes the answer over
// (first-page.ts): its first render shows the same rows from the same data, and the server's copy is removed then.
import { MantineProvider } from "@mantine/core";
import { createMemoryHistory, createRootRoute, createRouter, defaultParseSearch, RouterContextProvider } from "@tanstack/react-router";
import { renderToStaticMarkup } from "react-dom/server";
import type { FirstPage } from "./first-page";
import { jobsListParams, parseJobSearch, type JobSearch } from "./pages/job-search";
import { JobsTable } from "./pages/jobs-table";
import { cssVariables, theme } from "./theme";
import { withClock } from "./ui/format";

export { CLOCK_COOKIE, FIRST_PAGE_DATA_ID, FIRST_ROWS_ID } from "./first-page";

/**
 * The page's search for a /jobs address's query string (`?status=failed&…`, as the router parses it), and the
 * query of GET /jobs the page asks for it; null when the page shows no list (the failures view).
 */
export function firstListRequest(queryString: string): { search: JobSearch; query: Record<string, string | number> } | null {
  const search = parseJobSearch(defaultParseSearch(queryString));
  if (search.view === "failures") return null;
  const query = Object.fromEntries(Object.entries(jobsListParams(search)).filter(([, value]) => value !== undefined)) as Record<string, string | number>;
  return { search, query };
}

const ignore = () => {};

/**
 * The list's table with the page's rows, as static HTML (no handlers: the page's script brings them), its times
 * written for the browser's language and time zone (`clock`: Accept-Language, and the zone the page remembers in
 * the CLOCK_COOKIE) as the page will write them.
 */
export function renderFirstRows(first: FirstPage, clock: { locale?: string; timeZone?: string } = {}): string {
  return withClock(clock, () => renderTable(first));
}

function renderTable(first: FirstPage): string {
  // Rows link to their job with the router's links (a waiting job's note links to what it waits for).
  const router = createRouter({ routeTree: createRootRoute(), history: createMemoryHistory({ initialEntries: ["/jobs"] }) });
  return renderToStaticMarkup(
    <MantineProvider theme={theme} cssVariablesResolver={cssVariables} defaultColorScheme="light">
      <RouterContextProvider router={router}>
        <JobsTable
          rows={first.page.items}
          isChecked={() => false}
          pageChecked={false}
          pageIndeterminate={false}
          onTogglePage={ignore}
          onToggle={ignore}
          order={first.search.order}
          onOrder={ignore}
          opener={{ open: ignore, preload: ignore }}
        />
      </RouterContextProvider>
    </MantineProvider>,
  );
}
