// Two helps for the jobs list (issue 48 #10): a "Skip to the list" link first in the page, so the keyboard reaches the
// first row in four presses (skip to content, skip to the list) instead of 26 through the filters; and the list's
// spoken summary naming the jobs that arrive, since a full page's count does not change when a new row takes the top
// ("50 jobs shown" stayed "50 jobs shown").
import { Switch } from "@mantine/core";
import { useRef } from "react";
import { useRefreshLists } from "../data/jobs";
import { setListsPaused, useListsPaused } from "../live-pause";
import { shortId } from "../ui/format";

/** Focuses the list's first job link (a row's, or a card's). */
function focusFirstRow(): void {
  document.querySelector<HTMLElement>("[data-job-id] a[href]")?.focus();
}

export function SkipToList() {
  return (
    <a
      href="#jobs-list"
      className="skip-link"
      onClick={(event) => {
        event.preventDefault();
        focusFirstRow();
      }}
    >
      Skip to the list
    </a>
  );
}

/**
 * "1 new job: scripted …1a2b3c4d" (or "3 new jobs") when rows arrive in the same list (`list` names it: its search),
 * null otherwise. The first answer of a list announces nothing new.
 */
export function useListNews(rows: readonly { id: string; type: string }[] | undefined, list: unknown): string | null {
  const seen = useRef<{ list: unknown; ids: Set<string>; news: string | null } | null>(null);
  if (!rows) return seen.current && seen.current.list === list ? seen.current.news : null;
  const last = seen.current;
  if (!last || last.list !== list) {
    seen.current = { list, ids: new Set(rows.map((row) => row.id)), news: null };
    return null;
  }
  const fresh = rows.filter((row) => !last.ids.has(row.id));
  if (fresh.length > 0) {
    for (const row of fresh) last.ids.add(row.id);
    last.news = fresh.length === 1 ? `1 new job: ${fresh[0]!.type} ${shortId(fresh[0]!.id)}. ` : `${fresh.length} new jobs. `;
  }
  return last.news;
}

/** The switch that pauses live updates of the lists (live-pause.ts); resuming reads them again. */
export function LiveSwitch() {
  const paused = useListsPaused();
  const refreshLists = useRefreshLists();
  return (
    <Switch
      label="Live updates"
      checked={!paused}
      onChange={(event) => setListsPaused(!event.currentTarget.checked, refreshLists)}
      description={paused ? "Paused: the list stays as it is until you turn them on" : undefined}
      data-testid="live-switch"
    />
  );
}
