// What the console's server bundle (dist/server/first-page.cjs, built from first-page-server.tsx) exports: the
// contract between the console and the API, which loads the bundle at runtime to write the jobs list's first page
// into the console's HTML (apps/api/src/pages/console/first-page.ts). The console's source is typed by it, and the API
// imports it as a type (the package's "./server-contract" export): a change on one side that the other does not follow
// fails a typecheck. Declarations only, with nothing to import: the API's build takes it as they are.

/** What the drawn frame shows of the session: GET /auth/session's answer without its CSRF token. */
export type FrameSession = {
  user: { id: string; email: string };
  org: { id: string; name: string };
  role: "owner" | "admin" | "member";
  orgs: { id: string; name: string; role: "owner" | "admin" | "member" }[];
};

/** The list's first page as GET /jobs answered it: its items (JSON) and the cursor of the next page. */
export type FirstListPage = { items: unknown[]; next: string | null };

/** The search the console's jobs page reads from an address (opaque to the API, handed back as it came). */
export type FirstListSearch = { readonly [key: string]: unknown };

export type ConsoleServerBundle = {
  /** The cookie holding the browser's time zone (the console sets it), for times written as the page writes them. */
  CLOCK_COOKIE: string;
  /** The id of the `<script type="application/json">` the page takes the first page's data from. */
  FIRST_PAGE_DATA_ID: string;
  /** The id of the element holding the drawn page, which the page removes when it draws its own. */
  FIRST_ROWS_ID: string;
  /**
   * The page's search for a /jobs address's query string (`?status=failed&…`) and the query of GET /jobs the page asks
   * for it; null when the page shows no list (the failures view).
   */
  firstListRequest(queryString: string): { search: FirstListSearch; query: Record<string, string | number> } | null;
  /**
   * The jobs page at `address` as static HTML, for `session` with the list's `first` page, its times written for
   * `clock` (the browser's language and time zone); null when the address does not end on the list with that page.
   */
  renderFirstPage(
    input: { address: string; first: { search: FirstListSearch; page: FirstListPage }; session: FrameSession },
    clock?: { locale?: string; timeZone?: string },
  ): Promise<string | null>;
};
