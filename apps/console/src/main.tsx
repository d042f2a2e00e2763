// The console's entry: Mantine (theme, notifications), TanStack Query (the API's answers, cached), TanStack
// Router (pages in the URL, so every view is shareable), and what happens when a session ends under a page.
import "@mantine/core/styles.css";
import "@mantine/notifications/styles.css";
import { MantineProvider } from "@mantine/core";
import { Notifications } from "@mantine/notifications";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ApiError, onUnauthorized } from "./api";
import { dropServerRows, rememberClock } from "./first-page";
import { createConsoleRouter } from "./routes";
import { endSession, SESSION_ORG_KEY, sessionQuery, startSession } from "./session";
import { cssVariables, theme } from "./theme";
import { notify } from "./ui/notify";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      // A refusal will not change by asking again; a network hiccup may.
      retry: (count, error) => !(error instanceof ApiError && error.status > 0 && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
});
// Who is logged in is the first thing every page needs: ask while React and the router start.
void queryClient.prefetchQuery(sessionQuery);
const router = createConsoleRouter(queryClient);
// The page's own first data too (the jobs list): its loaders start now, beside the session, instead of after React's
// first render mounts the router (which then finds this load under way and waits for it). A loader's failure shows
// on the page as its route's error state; nothing more is done with the promise here.
router.load().catch(() => undefined);
// Rows the API drew into the HTML for /jobs (first-page.ts) go once a page is shown: the jobs page removes them as it
// draws its own; this covers any other page the arrival ends on (the login page, when the session ended meanwhile).
// The next arrival's first rows are written in this browser's time zone (first-page.ts).
rememberClock();
const unsubscribe = router.subscribe("onRendered", () => {
  dropServerRows();
  unsubscribe();
});

// The session ended (expired, logged out elsewhere, password changed): log in again, then come back here.
onUnauthorized(() => {
  if (!queryClient.getQueryData(sessionQuery.queryKey)) return;
  endSession(queryClient);
  const here = router.state.location.href;
  void router.navigate({ to: "/login", search: { redirect: here } });
});

// Another tab switched organization, logged in as someone else or logged out: this tab follows at once — the session
// read again, every cached answer of the last organization dropped, the page shown again for the new one (its open
// forms closed) — and says so. Until then, api.ts refuses to send a change.
window.addEventListener("storage", (event) => {
  if (event.key !== SESSION_ORG_KEY) return;
  const shown = queryClient.getQueryData(sessionQuery.queryKey);
  if (!shown || event.newValue === shown.org.id) return;
  void (async () => {
    const next = await queryClient.fetchQuery({ ...sessionQuery, staleTime: 0 }).catch(() => null);
    if (!next) {
      endSession(queryClient);
      void router.navigate({ to: "/login", search: { redirect: router.state.location.href } });
      return;
    }
    if (next.org.id === shown.org.id && next.user.id === shown.user.id) return;
    startSession(queryClient, next);
    await router.invalidate();
    notify({
      color: "blue",
      title: `Now showing ${next.org.name}`,
      message: "You switched organization in another tab; this tab follows it.",
    });
  })();
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={cssVariables}>
      {/* Bottom right, at most three: never over a page's main button or the account menu (issue 23 #8). */}
      <Notifications position="bottom-right" limit={3} />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
