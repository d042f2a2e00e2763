// The jobs list: every docs/reference/lifecycle.md#steering filter and the search box live in the URL (a view can be shared), pages are keyset
// pages (the API's Link cursor), rows change live as events arrive, and jobs can be cancelled or replayed in bulk —
// the selected ones, or all that match the filters.
import {
  Button,
  Checkbox,
  CloseButton,
  Group,
  MultiSelect,
  Paper,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from "@mantine/core";
import { keepPreviousData, queryOptions, useQuery } from "@tanstack/react-query";
import { useNavigate, useRouter, useSearch } from "@tanstack/react-router";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { BUILT_IN_JOB_TYPES } from "@conveyor/client";
import { api, callPage } from "../api";
import { dropServerRows } from "../first-page";
import { keys } from "../data/keys";
import { useSchedules } from "../data/schedules";
import { FailureGroups } from "./failure-groups";
import { SavedViews } from "./saved-views";
import { BulkActions, type Selection } from "./jobs-bulk";
import { durationText, MatchedPath, When, type JobRow, type OpenJob } from "./jobs-rows";
import { JobsTable } from "./jobs-table";
import { LiveSwitch, SkipToList, useListNews } from "./jobs-news";
import { TestRun } from "./test-run";
import { FILTER_KEYS, filterOf, jobsListParams, parseJobSearch, type JobFilter, type JobSearch } from "./job-search";
import { ErrorState, Empty, Loading } from "../ui/states";
import { formatTime, jobDuration, shortId, StatusBadge, STATUSES, Time } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { useNarrow } from "../ui/narrow";
import { WaitingNote } from "../ui/waiting";

export { filterOf, parseJobSearch };
export type { JobSearch };

/** What a `due` filter shows, in words (the overview's Due now and Delayed open these). */
const DUE_WORDS: Record<NonNullable<JobSearch["due"]>, string> = {
  now: "Pending jobs due now: waiting to start (for a worker, other jobs or a limit)",
  later: "Pending jobs due later: run_at or a retry's wait still ahead",
};

/** What a finished_after/finished_before filter shows, in words (the overview's bars open these). */
function finishedWords(after: string | undefined, before: string | undefined): string {
  if (after && before) return `Jobs that finished from ${formatTime(after)} to before ${formatTime(before)}`;
  return after ? `Jobs that finished at or after ${formatTime(after)}` : `Jobs that finished before ${formatTime(before)}`;
}

/** One page of the list for a search (the route starts it while the session is checked; the page reads it). */
export const jobsListQuery = (search: JobSearch) =>
  queryOptions({
    queryKey: keys.jobs.list(search),
    // With each job's last error, shown in a failed row.
    queryFn: () => callPage(api.GET("/jobs", { params: { query: jobsListParams(search) } })),
  });

/** The list's size in words, for the announcement of a change. */
export function listSummary(count: number, more: boolean): string {
  if (count === 0) return "No job matches";
  return `${count} job${count === 1 ? "" : "s"} shown${more ? ", more on the next page" : ""}`;
}

/** ISO time → the value of a datetime-local input (local time), and back. */
export const toLocalInput = (iso?: string) => {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
export const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : undefined);

export function JobsPage() {
  const search = useSearch({ from: "/app/jobs" });
  const navigate = useNavigate({ from: "/jobs" });
  const setSearch = (next: JobSearch) => void navigate({ search: next });
  const [selection, setSelection] = useState<Selection>({ ids: new Set(), allMatching: false });
  // The rows the API drew into the HTML go in the commit that draws this page's own (from the same answer).
  useLayoutEffect(dropServerRows, []);

  const list = useQuery({ ...jobsListQuery(search), placeholderData: keepPreviousData, enabled: search.view !== "failures" });
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
          jobCards()
        ) : (
          <JobsTable
            rows={rows}
            isChecked={(id) => selection.allMatching || selection.ids.has(id)}
            pageChecked={selection.allMatching || allOnPage}
            pageIndeterminate={!selection.allMatching && !allOnPage && selection.ids.size > 0}
            onTogglePage={togglePage}
            onToggle={toggle}
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

  // On a phone, each job is a card (issue 38): what it is, its status and error, when — the whole width of the screen,
  // nothing cut off at the side (the table was 368 px inside 341).
  function jobCards() {
    return (
      <Stack gap="xs">
        <Checkbox
          label="Select every job on this page"
          checked={selection.allMatching || allOnPage}
          indeterminate={!selection.allMatching && !allOnPage && selection.ids.size > 0}
          onChange={togglePage}
        />
        <Stack component="ul" gap="xs" aria-label="Jobs" data-testid="jobs-cards" p={0} m={0} style={{ listStyle: "none" }}>
          {rows.map((row) => (
            <Paper component="li" withBorder p="xs" key={row.id} data-job-id={row.id} data-status={row.status} style={{ minWidth: 0 }}>
              <Group gap="xs" wrap="nowrap" align="flex-start">
                <Checkbox
                  mt={2}
                  aria-label={`Select job ${row.id}`}
                  checked={selection.allMatching || selection.ids.has(row.id)}
                  onChange={() => toggle(row.id)}
                />
                <Stack gap={2} miw={0} style={{ flex: 1 }}>
                  <Group gap="xs" justify="space-between" wrap="nowrap">
                    <RouterAnchor to="/jobs/$id" params={{ id: row.id }} size="sm" fw={600} style={{ overflowWrap: "anywhere" }}>
                      {row.type}{" "}
                      <Text span ff="monospace" size="xs" c="dimmed">
                        {shortId(row.id)}
                      </Text>
                    </RouterAnchor>
                    <StatusBadge status={row.status} />
                  </Group>
                  {row.matched && (
                    <Text size="xs" c="dimmed" data-testid="row-matched">
                      matched <MatchedPath path={row.matched} />
                    </Text>
                  )}
                  <WaitingNote job={row} />
                  {row.status === "failed" && row.error && (
                    <Text size="xs" c="red.9" lineClamp={3} title={row.error} data-testid="row-error" style={{ overflowWrap: "break-word" }}>
                      {row.error}
                    </Text>
                  )}
                  <Text size="xs" c="dimmed">
                    Created <Time iso={row.created_at} /> · <When row={row} />
                    {jobDuration(row) !== null ? ` · took ${durationText(row)}` : ""}
                  </Text>
                </Stack>
              </Group>
            </Paper>
          ))}
        </Stack>
      </Stack>
    );
  }
}

/** The schedule filter: the organization's schedules by name (an id in the address that names none is kept, by its short id). */
function SchedulePicker({ value, onChange }: { value: string | undefined; onChange(value: string | undefined): void }) {
  // Read when the picker is opened or a schedule is set, not with every jobs list.
  const [opened, setOpened] = useState(false);
  const schedules = useSchedules({ enabled: opened || Boolean(value) });
  const data = (schedules.data ?? []).map((schedule) => ({ value: schedule.id, label: schedule.name }));
  if (value && !data.some((option) => option.value.toLowerCase() === value.toLowerCase())) data.push({ value, label: `Schedule …${value.slice(-8)}` });
  return (
    <Select
      label="Schedule"
      placeholder="Any schedule"
      data={data}
      value={value ?? null}
      onChange={(next) => onChange(next ?? undefined)}
      searchable
      clearable
      nothingFoundMessage={schedules.isFetching ? "Loading the schedules…" : "No schedule of that name"}
      onDropdownOpen={() => setOpened(true)}
      comboboxProps={{ withinPortal: true, keepMounted: false }}
    />
  );
}

function Filters({ search, failureExample, onChange }: { search: JobSearch; failureExample?: JobRow; onChange(filter: JobFilter): void }) {
  const [draft, setDraft] = useState<JobFilter>(filterOf(search));
  // A new search (a link, Back, a chip removed) replaces the draft; the one the draft was first made from does not.
  const draftOf = useRef(search);
  useEffect(() => {
    if (draftOf.current === search) return;
    draftOf.current = search;
    setDraft(filterOf(search));
  }, [search]);
  // Text fields apply on Enter (the form's submit) or when they lose focus; the others at once.
  const apply = (next: JobFilter = draft) => onChange(Object.fromEntries(Object.entries(next).filter(([, v]) => v)) as JobFilter);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    apply();
  };
  const text = (key: "q" | "type") => ({
    value: draft[key] ?? "",
    onChange: (event: { currentTarget: { value: string } }) => setDraft({ ...draft, [key]: event.currentTarget.value }),
    onBlur: () => {
      if ((draft[key] ?? "") !== (search[key] ?? "")) apply();
    },
  });
  const statuses = search.status ? search.status.split(",") : [];
  // On a phone the filters besides the search box fold away behind a button (open when one of them is set). Folded
  // by the stylesheet (visibleFrom), not by the width read here: the API's drawing of the page folds them the same.
  const others = FILTER_KEYS.filter((key) => key !== "q" && search[key]).length;
  const [unfolded, setUnfolded] = useState(others > 0);
  const [datesOpen, setDatesOpen] = useState(false);
  // The button that opened them is gone: the first date field takes its focus.
  const firstDate = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (datesOpen) firstDate.current?.focus();
  }, [datesOpen]);
  const hasFilter = Object.keys(filterOf(search)).length > 0;
  const showDates = datesOpen || Boolean(search.created_after || search.created_before || draft.created_after || draft.created_before);
  return (
    <form onSubmit={submit} role="search" aria-label="Filter jobs">
      <Stack gap="xs">
        <TextInput
          label="Search"
          placeholder="A job id or short id, a payload value, field:value like customer:Globex, or a prefix like INV-20*"
          {...text("q")}
        />
        {search.failure_group && (
          <Group gap={4} wrap="nowrap" data-testid="failure-group-filter">
            <Text size="sm" miw={0} lineClamp={2}>
              {failureExample?.error ? (
                <>
                  Jobs failing like this <code>{failureExample.type}</code> job: <q>{failureExample.error}</q>
                </>
              ) : (
                <>
                  Jobs whose last error is of failure group <code>{search.failure_group}</code>
                </>
              )}
            </Text>
            <CloseButton size="sm" aria-label="Show jobs of every error" onClick={() => apply({ ...draft, failure_group: undefined })} />
          </Group>
        )}
        {(search.finished_after || search.finished_before) && (
          <Group gap={4} wrap="nowrap" data-testid="finished-filter">
            <Text size="sm">{finishedWords(search.finished_after, search.finished_before)}</Text>
            <CloseButton
              size="sm"
              aria-label="Show jobs whenever they finished"
              onClick={() => apply({ ...draft, finished_after: undefined, finished_before: undefined })}
            />
          </Group>
        )}
        {search.due && (
          <Group gap={4} wrap="nowrap" data-testid="due-filter">
            <Text size="sm">{DUE_WORDS[search.due]}</Text>
            <CloseButton size="sm" aria-label="Show jobs whenever due" onClick={() => apply({ ...draft, due: undefined })} />
          </Group>
        )}
        <SimpleGrid cols={{ base: 1, xs: 2, lg: 5 }} spacing="xs" verticalSpacing={8} id="more-job-filters" visibleFrom={unfolded ? undefined : "sm"}>
          <MultiSelect
            label="Status"
            placeholder={statuses.length ? undefined : "Any status"}
            data={[...STATUSES]}
            value={statuses}
            onChange={(value) => apply({ ...draft, status: value.join(",") || undefined })}
            clearable
            // Not mounted while closed: a mounted dropdown is positioned at once, a forced layout in the page's first render.
            comboboxProps={{ withinPortal: true, keepMounted: false }}
          />
          <TextInput label="Type" placeholder="e.g. send_email" list="job-types" {...text("type")} />
          {/* Each date field is seven Tab stops in Chromium (one per part of the date): they stay behind a button until
              asked for or set, so the first job is not 14 presses further away (issue 38 #13). */}
          {showDates ? (
            <>
              <TextInput
                ref={firstDate}
                label="Created after"
                type="datetime-local"
                value={toLocalInput(draft.created_after)}
                onChange={(e) => apply({ ...draft, created_after: fromLocalInput(e.currentTarget.value) })}
              />
              <TextInput
                label="Created before"
                type="datetime-local"
                value={toLocalInput(draft.created_before)}
                onChange={(e) => apply({ ...draft, created_before: fromLocalInput(e.currentTarget.value) })}
              />
            </>
          ) : (
            <Stack justify="flex-end">
              <Button variant="default" size="sm" onClick={() => setDatesOpen(true)}>
                Created between…
              </Button>
            </Stack>
          )}
          <SchedulePicker value={draft.schedule_id} onChange={(schedule_id) => apply({ ...draft, schedule_id })} />
        </SimpleGrid>
        <datalist id="job-types">
          {BUILT_IN_JOB_TYPES.map((type) => (
            <option key={type} value={type} />
          ))}
        </datalist>
        <Group gap="xs">
          <Button size="xs" variant="default" hiddenFrom="sm" aria-expanded={unfolded} aria-controls="more-job-filters" onClick={() => setUnfolded(!unfolded)}>
            {unfolded ? "Fewer filters" : others ? `More filters (${others})` : "More filters"}
          </Button>
          <Button type="submit" size="xs">
            Apply filters
          </Button>
          {/* Nothing to clear: on a phone the button is left out, so the buttons are one line (issue 48 #10). */}
          <Button size="xs" variant="subtle" onClick={() => apply({})} disabled={!hasFilter} visibleFrom={hasFilter ? undefined : "sm"}>
            Clear filters
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
