// The jobs list's filters (docs/reference/lifecycle.md#steering): the search box, and behind "More filters" on a phone the
// status, type, creation dates and schedule; the filters the overview and a failure group open are named in words,
// each with a button that removes it. Text fields apply on Enter or when they lose focus, the others at once.
import { Button, CloseButton, Group, MultiSelect, Select, SimpleGrid, Stack, Text, TextInput } from "@mantine/core";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { BUILT_IN_JOB_TYPES } from "@conveyor/client";
import { useSchedules } from "../data/schedules";
import { formatTime, STATUSES } from "../ui/format";
import { fromLocalInput, toLocalInput } from "../ui/local-time";
import type { JobRow } from "./jobs-rows";
import { FILTER_KEYS, filterOf, type JobFilter, type JobSearch } from "./job-search";

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

export function Filters({ search, failureExample, onChange }: { search: JobSearch; failureExample?: JobRow; onChange(filter: JobFilter): void }) {
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
