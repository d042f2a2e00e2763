// Bulk cancel and replay (POST /jobs/bulk): the selected jobs by id, or every job matching the list's filters.
// The confirmation says how many; a filter is counted first (up to the 10,000 one call handles), and the action
// is repeated while the API says `has_more`.
import { Alert, Button, Group, Paper, Text } from "@mantine/core";
import { useState } from "react";
import { bulkJobs, bulkRefresh, useMatchingCount, type BulkAction } from "../data/jobs";
import { Confirm } from "../ui/confirm";
import type { JobFilter } from "./job-search";
import { useAction } from "../data/actions";
import { ReplayDialog } from "./replay-dialog";

/** Rows picked on a page, or all jobs matching the filters (`filterKey`: which filters, so another page keeps it). */
export type Selection = { ids: Set<string>; allMatching: boolean; filterKey?: string };
type Action = BulkAction;

/** The bar's height with its buttons on one line: the same with nothing selected. */
const BAR_HEIGHT = 54;

const describe = (filter: JobFilter) =>
  Object.entries(filter)
    .map(([key, value]) => `${key} = ${value}`)
    .join(", ") || "no filter: every job of the organization";

/** What each action applies to (POST /jobs/bulk skips the others). */
const CANCELLABLE: readonly string[] = ["pending", "processing"];
const REPLAYABLE: readonly string[] = ["done", "failed", "cancelled"];

export function BulkActions(props: {
  filter: JobFilter;
  selection: Selection;
  onSelection(selection: Selection): void;
  pageCount: number;
  hasMore: boolean;
  /** The statuses of the selected rows (a selection by id is of rows on this page). */
  selectedStatuses: readonly string[];
}) {
  const { filter, selection, onSelection } = props;
  const [action, setAction] = useState<Action | null>(null);
  const bulk = useAction({
    run: ({ action, ids, filter }: { action: Action; ids: string[] | null; filter: JobFilter }) => bulkJobs(ids ? { action, ids } : { action, filter }),
    done: ({ matched, affected }, { action }) => ({
      title: `${action === "cancel" ? "Cancelled" : "Replayed"} ${affected.toLocaleString()} job${affected === 1 ? "" : "s"}`,
      message:
        matched > affected
          ? `${(matched - affected).toLocaleString()} of the ${matched.toLocaleString()} matched were skipped: ${action === "cancel" ? "already finished or being cancelled" : "not finished yet"}.`
          : `${matched.toLocaleString()} matched.`,
    }),
    failed: ({ action }) => `Bulk ${action} failed`,
    refresh: bulkRefresh,
    onSuccess: () => {
      onSelection({ ids: new Set(), allMatching: false });
      setAction(null);
    },
  });
  const busy = bulk.isPending;
  const [editing, setEditing] = useState<string | null>(null);
  // Counted as soon as all matching jobs are selected: the bar says how many (issue 38 #12).
  const count = useMatchingCount(filter, { enabled: selection.allMatching });
  const selected = selection.ids.size;
  // The bar keeps its place while nothing is selected, so selecting a row never moves the rows below it.
  if (!selected && !selection.allMatching)
    return (
      <Paper withBorder p="xs" role="region" aria-label="Bulk actions" mih={BAR_HEIGHT} display="flex" style={{ alignItems: "center" }}>
        <Text size="sm" c="dimmed">
          Select jobs to cancel or replay them together.
        </Text>
      </Paper>
    );
  // Only the actions that apply to something selected: cancelling failed jobs would cancel none.
  const possible = selection.allMatching ? (filter.status ? filter.status.split(",") : [...CANCELLABLE, ...REPLAYABLE]) : props.selectedStatuses;
  const canCancel = possible.some((status) => CANCELLABLE.includes(status));
  const canReplay = possible.some((status) => REPLAYABLE.includes(status));

  const run = () => {
    if (action) bulk.mutate({ action, ids: selection.allMatching ? null : [...selection.ids], filter });
  };

  const countText = selection.allMatching
    ? count.isPending
      ? "Counting the matching jobs…"
      : count.isError
        ? `Could not count them: ${count.error.message}`
        : `${count.data.count.toLocaleString()}${count.data.more ? " or more" : ""} job${count.data.count === 1 ? "" : "s"} match (${describe(filter)}).`
    : `${selected} selected job${selected === 1 ? "" : "s"}.`;

  return (
    <Paper withBorder p="xs" bg="var(--mantine-color-indigo-light)" role="region" aria-label="Bulk actions" mih={BAR_HEIGHT}>
      <Group justify="space-between" gap="xs">
        <Text size="sm" fw={600} data-testid="selection-count">
          {selection.allMatching
            ? count.data
              ? `All ${count.data.count.toLocaleString()}${count.data.more ? "+" : ""} matching jobs selected, on every page`
              : "All matching jobs selected, on every page"
            : `${selected} selected`}
        </Text>
        <Group gap="xs">
          {!selection.allMatching && selected === props.pageCount && props.hasMore && (
            <Button size="xs" variant="subtle" onClick={() => onSelection({ ids: new Set(), allMatching: true, filterKey: JSON.stringify(filter) })}>
              Select all matching jobs
            </Button>
          )}
          {canCancel && (
            <Button size="xs" color="red.9" onClick={() => setAction("cancel")}>
              Cancel…
            </Button>
          )}
          {canReplay && (
            <Button size="xs" onClick={() => setAction("replay")}>
              Replay…
            </Button>
          )}
          {/* One finished job: replay it with another payload (to fix what made it fail). */}
          {!selection.allMatching && selected === 1 && canReplay && (
            <Button size="xs" variant="light" onClick={() => setEditing([...selection.ids][0]!)}>
              Replay with changes…
            </Button>
          )}
          <Button size="xs" variant="default" onClick={() => onSelection({ ids: new Set(), allMatching: false })}>
            Clear selection
          </Button>
        </Group>
      </Group>
      <ReplayDialog jobId={editing} onClose={() => setEditing(null)} />
      <Confirm
        opened={action !== null}
        title={action === "cancel" ? "Cancel jobs" : "Replay jobs"}
        confirmLabel={action === "cancel" ? "Cancel them" : "Replay them"}
        color={action === "cancel" ? "red.9" : "indigo"}
        loading={busy}
        onConfirm={run}
        onClose={() => !busy && setAction(null)}
      >
        <Text size="sm" data-testid="bulk-count">
          {countText}
        </Text>
        <Alert mt="sm" color="gray" variant="light">
          {action === "cancel"
            ? "Pending jobs will never run; processing jobs are asked to stop. Finished jobs are skipped."
            : "Each finished job runs again as a new job; the originals stay as they are. Unfinished jobs are skipped."}
        </Alert>
      </Confirm>
    </Paper>
  );
}
