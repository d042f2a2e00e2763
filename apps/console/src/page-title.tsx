// What a screen reader and the tab strip learn of each page (issue 23 #14): the tab is titled after the page's main
// heading ("Queues · Conveyor", not "Conveyor" on every tab), and after a navigation inside the console the focus
// moves to that heading, so the next Tab starts from the new page instead of from a link that is gone.
//
// The title follows the heading for as long as the tab lives, not only once per address (issue 48 #3): an
// organization switch draws the page again under the same address, and a page's heading can change in place
// ("Loading…" to the job's type, "Job not found" to the job once the switch is over); a title taken once stayed one
// page behind for the rest of the tab's life.
import { useRouterState } from "@tanstack/react-router";
import { useEffect, useRef } from "react";

/** How long after a navigation the focus may still move to the new page's heading (its code and data may load). */
const HEADING_WAIT_MS = 5_000;

/** The tab's title for the page's main heading (a page naming itself otherwise says so in data-page-title). */
function titleOf(heading: HTMLElement | null): string | null {
  const text = heading?.dataset.pageTitle ?? heading?.textContent?.trim();
  return text ? `${text} · Conveyor` : null;
}

export function PageTitle() {
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  // The heading on screen when the address changed: the new page's is another element.
  const before = useRef<HTMLElement | null>(null);
  const focusUntil = useRef(0);
  const first = useRef(true);

  // The title: whatever the main heading says now, every time it changes.
  useEffect(() => {
    const follow = () => {
      const heading = document.querySelector<HTMLElement>("h1");
      const title = titleOf(heading);
      if (title && document.title !== title) document.title = title;
      if (heading && title && Date.now() < focusUntil.current && heading !== before.current) {
        focusUntil.current = 0;
        // Not away from a field the new page focused itself (the login form's e-mail), nor out of a dialog.
        const active = document.activeElement;
        const kept = active && active !== document.body && active.isConnected && !active.closest("nav, header");
        if (!kept && !document.querySelector('[role="dialog"]')) {
          heading.tabIndex = -1;
          heading.focus({ preventScroll: true });
        }
      }
    };
    follow();
    const observer = new MutationObserver(follow);
    observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ["data-page-title"] });
    return () => observer.disconnect();
  }, []);

  // The focus: once per navigation inside the console, to the new page's heading when it comes.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    before.current = document.querySelector<HTMLElement>("h1");
    focusUntil.current = Date.now() + HEADING_WAIT_MS;
  }, [pathname]);
  return null;
}
