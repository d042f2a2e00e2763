// The jobs list's first page as the API wrote it into the page's HTML (first-page-server.tsx renders it, the API's
// pages/console/first-page.ts writes it): the answer of the page's own first GET /jobs, as JSON, and the page with
// its rows in the console's frame, drawn before this script ran. The jobs route hands the answer to the query cache
// instead of asking again; the page's first render removes the server's drawing in the same commit, so nothing is
// shown twice, and the page's own frame and rows take the places the drawn ones had.
import type { JobSearch } from "./pages/job-search";
import type { JobRow } from "./pages/jobs-rows";

export const FIRST_PAGE_DATA_ID = "first-page";
export const FIRST_ROWS_ID = "first-rows";

/** What the API hands over: the search it answered (the page's own reading of the URL) and GET /jobs' page. */
export type FirstPage = { search: JobSearch; page: { items: JobRow[]; next: string | null } };

/**
 * The browser's time zone, for the API to write the first rows' times as this page does (not a secret: a cookie
 * only so that it comes with the navigation). Its language comes in Accept-Language.
 */
export const CLOCK_COOKIE = "conveyor_time_zone";

/** Remembers this browser's time zone for the next arrival's first rows. */
export function rememberClock(): void {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const cookie = `${CLOCK_COOKIE}=${encodeURIComponent(zone)}`;
  if (!document.cookie.split("; ").includes(cookie)) document.cookie = `${cookie}; path=/; max-age=31536000; samesite=strict`;
}

let handed: FirstPage | null | undefined;

/** The first page the API answered for this search, once; null when it answered none or another search. */
export function takeFirstPage(search: JobSearch): FirstPage["page"] | null {
  // On the API, drawing the page (first-page-server.tsx), the list is in the query cache already.
  if (typeof document === "undefined") return null;
  if (handed === undefined) {
    const element = document.getElementById(FIRST_PAGE_DATA_ID);
    handed = element?.textContent ? (JSON.parse(element.textContent) as FirstPage) : null;
    element?.remove();
  }
  const first = handed;
  handed = null;
  return first && JSON.stringify(first.search) === JSON.stringify(search) ? first.page : null;
}

/** Removes the page the API drew (FIRST_ROWS_ID: the page now shows its own, or another page is shown). */
export function dropServerRows(): void {
  document.getElementById(FIRST_ROWS_ID)?.remove();
}
