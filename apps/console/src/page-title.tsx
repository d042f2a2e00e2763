// What a screen reader and the tab strip learn of each page (issue 23 #14): the tab is titled after the page's main
// heading ("Queues · Conveyor", not "Conveyor" on every tab), and after a navigation inside the console the focus
// moves to that heading, so the next Tab starts from the new page instead of from a link that is gone.
import { useRouterState } from "@tanstack/react-router";
import { useEffect, useRef } from "react";

/** How long to wait for a page's heading (its code and data may still be loading). */
const HEADING_WAIT_MS = 5_000;

export function PageTitle() {
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const first = useRef(true);
  // The heading the last page was titled after: the next page's is another element (the old one may still be on
  // screen while the new page's code loads).
  const last = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const moveFocus = !first.current;
    first.current = false;
    let done = false;
    const apply = (): boolean => {
      const heading = document.querySelector<HTMLElement>("h1");
      // Loading placeholders have no heading: wait for the page's own.
      if (!heading?.textContent?.trim() || heading === last.current) return false;
      last.current = heading;
      // A page whose heading is not its own alone (a job's type) names itself in data-page-title (type and short id).
      document.title = `${heading.dataset.pageTitle ?? heading.textContent.trim()} · Conveyor`;
      // Not away from a field the new page focused itself (the login form's e-mail), nor out of a dialog.
      const active = document.activeElement;
      const kept = active && active !== document.body && active.isConnected && !active.closest("nav, header");
      if (moveFocus && !kept && !document.querySelector('[role="dialog"]')) {
        heading.tabIndex = -1;
        heading.focus({ preventScroll: true });
      }
      return true;
    };
    if (apply()) return;
    const observer = new MutationObserver(() => {
      if (!done && apply()) {
        done = true;
        observer.disconnect();
      }
    });
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    const timer = setTimeout(() => observer.disconnect(), HEADING_WAIT_MS);
    return () => {
      observer.disconnect();
      clearTimeout(timer);
    };
  }, [pathname]);
  return null;
}
