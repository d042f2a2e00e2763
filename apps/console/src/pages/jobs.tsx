// The jobs list: every docs/reference/lifecycle.md#steering filter and the search box live in the URL (a view can be shared), pages are keyset
// pages (the API's Link cursor), rows change live as events arrive, and jobs can be cancelled or replayed in bulk —
// the selected ones, or all that match the filters.
import { Button, Group, SegmentedControl, Stack, Title, VisuallyHidden } from "@mantine/core";
import { useRouter, useSearch, useNavigate } from "@tanstack/react-router";
import { useCallback, useEffect, useLayoutEffect, useMemo, useState } from "react";
import { useJobsList } from "../data/jobs";
import { dropServerRows } from "../first-page";
import { useNarrow } from "../ui/narrow";
import { ErrorState, Empty, Loading } from "../ui/states";
import { FailureGroups } from "./failure-groups";
import { JobCards } from "./jobs-cards";
import { BulkActions, type Selection } from "./jobs-bulk";
import { Filters } from "./jobs-filters";
import { LiveSwitch, SkipToList, useListNews } from "./jobs-news";
import type { JobSelection, OpenJob } from "./jobs-rows";
import { JobsTable } from "./jobs-table";
import { filterOf, parseJobSearch, type JobSearch } from "./job-search";
import { SavedViews } from "./saved-views";
import { TestRun } from "./test-run";

export { filterOf, parseJobSearch };
export type { JobSearch };

/** The list's size in words, for the announcement of a change. */
export function listSummary(count: number, more: boolean): string {
  if (count === 0) return "No job matches";
  return `${count} job${count === 1 ? "" : "s"} shown${more ? ", more on the next page" : ""}`;
}

export function JobsPage() {
  const search = useSearch({ from: "/app/jobs" });
  const navigate = useNavigate({ from: "/jobs" });
  const setSearch = (next: JobSearch) => void navigate({ search: next });
  const [selection, setSelection] = useState<Selection>({ ids: new Set(), allMatching: false });
  // The rows the API drew into the HTML go in the commit that draws this page's own (from the same answer).
  useLayoutEffect(dropServerRows, []);

  const list = useJobsList(search, { enabled: search.view !== "failures" });
  // A new filter or page starts a new selection (an empty one is kept as it is, so the page is not drawn twice on arrival).
  // Another page of the same filters keeps "all matching" (it is on every page; issue 38 #12); rows picked by hand are of one page.
  const filterKey = JSON.stringify(filterOf(search));
  useEffect(
    () =>
      setSelection((current) => {
        if (current.ids.size === 0 && !current.allMatching) return current;
        if (current.allMatching && current.filterKey === filterKey) return current;
        return { ids: new Set(), allMatching: false };
      }),
    [search, filterKey],
  );

  const rows = list.data?.items ?? [];
  const grouped = search.view === "failures";
  // On a phone the table keeps the columns that say what a job is; the others are on the job's page.
  const narrow = useNarrow();
  const allOnPage = rows.length > 0 && rows.every((row) => selection.ids.has(row.id));
  // Stable, so a row is drawn again only when its own job or checkbox changes (a live event, a click).
  const toggle = useCallback(
    (id: string) =>
      setSelection((current) => {
        const ids = new Set(current.ids);
        if (ids.has(id)) ids.delete(id);
        else ids.add(id);
        return { ids, allMatching: false };
      }),
    [],
  );
  const router = useRouter();
  const opener = useMemo<OpenJob>(
    () => ({
      open: (id) => void router.navigate({ to: "/jobs/$id", params: { id } }),
      preload: (id) => void router.preloadRoute({ to: "/jobs/$id", params: { id } }).catch(() => undefined),
    }),
    [router],
  );
  const news = useListNews(list.isPlaceholderData ? undefined : list.data?.items, JSON.stringify(search));
  const togglePage = () => setSelection({ ids: allOnPage ? new Set() : new Set(rows.map((row) => row.id)), allMatching: false });
  // What the cards (phone) and the table both take: the rows and the page's selection.
  const selectable: JobSelection = {
    rows,
    isChecked: (id) => selection.allMatching || selection.ids.has(id),
    pageChecked: selection.allMatching || allOnPage,
    pageIndeterminate: !selection.allMatching && !allOnPage && selection.ids.size > 0,
    onTogglePage: togglePage,
    onToggle: toggle,
  };

  return (
    <Stack>
      <SkipToList />
      <Group justify="space-between" align="center" gap="xs">
        <Title order={1} size="h2">
          Jobs
        </Title>
        <Group gap="sm">
          <TestRun />
          <LiveSwitch />
        </Group>
      </Group>
      <SavedViews filter={filterOf(search)} onApply={(filter) => setSearch(grouped ? { ...filter, view: "failures" } : { ...filter, order: search.order })} />
      <Filters
        search={search}
        // A failure group is named by one of its jobs' type and error when the page holds one (its id otherwise).
        failureExample={search.failure_group ? rows.find((row) => row.error) : undefined}
        // A new filter keeps the list's order (and starts at its first page).
        onChange={(filter) => setSearch(grouped ? { ...filter, view: "failures" } : { ...filter, order: search.order })}
      />
      <SegmentedControl
        aria-label="Show"
        data={[
          { value: "list", label: "All jobs" },
          { value: "failures", label: "Failures by error" },
        ]}
        value={grouped ? "failures" : "list"}
        onChange={(value) => setSearch({ ...filterOf(search), view: value === "failures" ? "failures" : undefined, failure_group: undefined })}
        style={{ alignSelf: "flex-start" }}
      />
      {grouped ? (
        <FailureGroups filter={filterOf(search)} onShowJobs={(group) => setSearch({ ...filterOf(search), failure_group: group, view: undefined })} />
      ) : (
        jobsTable()
      )}
    </Stack>
  );

  // A function, not a component: a component declared in here would be a new type at every render (remounted).
  function jobsTable() {
    return (
      <>
        <BulkActions
          filter={filterOf(search)}
          selection={selection}
          onSelection={setSelection}
          pageCount={rows.length}
          hasMore={Boolean(list.data?.next)}
          selectedStatuses={rows.filter((row) => selection.ids.has(row.id)).map((row) => row.status)}
        />
        {/* What the list now shows, said to a screen reader when it changes (a filter, a page, a live update). */}
        <VisuallyHidden aria-live="polite" aria-atomic="true" data-testid="jobs-announcement">
          {list.isPending
            ? "Loading jobs"
            : list.isError
              ? "The jobs could not be loaded"
              : `${news ?? ""}${listSummary(rows.length, Boolean(list.data?.next))}`}
        </VisuallyHidden>
        {list.isPending ? (
          <Loading label="Loading jobs…" />
        ) : list.isError ? (
          <ErrorState error={list.error} retry={() => void list.refetch()} />
        ) : rows.length === 0 ? (
          <Empty title={Object.keys(filterOf(search)).length ? "No job matches these filters" : "No jobs yet"}>
            {search.q && /^[0-9a-f]{8}$/i.test(search.q)
              ? `A short id is the last 8 characters of a job's id, as the list shows it: “${search.q}” ends no job id here (the first 8 are the time the job was made, shared by many).`
              : Object.keys(filterOf(search)).length
                ? "Change or clear the filters to see more."
                : "Enqueue one with POST /jobs and an API key; it shows up here as soon as it is created."}
          </Empty>
        ) : narrow ? (
          <JobCards {...selectable} />
        ) : (
          <JobsTable
            {...selectable}
            order={search.order}
            onOrder={() => setSearch({ ...search, order: search.order === "oldest" ? undefined : "oldest", cursor: undefined })}
            opener={opener}
          />
        )}
        <Group justify="space-between">
          <Button variant="default" disabled={!search.cursor} onClick={() => setSearch({ ...search, cursor: undefined })}>
            First page
          </Button>
          <Button variant="default" disabled={!list.data?.next} onClick={() => setSearch({ ...search, cursor: list.data?.next ?? undefined })}>
            Next page
          </Button>
        </Group>
      </>
    );
  }
}
