// The jobs list's grouped view (issue 23): failed jobs grouped by type and normalised error (GET /jobs/failures) under
// the list's own filters, each group with its count, first and last failure and a sample job, and three actions — see
// its jobs (the list filtered by failure_group), replay its failed jobs, cancel those still waiting to retry after
// that error — the last two POST /jobs/bulk with the group as the filter, repeated while the API says has_more.
import { Alert, Button, Group, Paper, ScrollArea, Stack, Table, Text } from "@mantine/core";
import { useState } from "react";
import { bulkJobs, bulkRefresh, useFailureGroups, type FailureGroup, type GroupFilter } from "../data/jobs";
import { Confirm } from "../ui/confirm";
import { shortId, Time } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { useNarrow } from "../ui/narrow";
import { useAction } from "../data/actions";
import { Empty, ErrorState, Loading } from "../ui/states";
import type { JobFilter } from "./job-search";

type Action = { kind: "replay" | "cancel"; group: FailureGroup };

/** The list's filters that grouped failures do not take, as the page names them when they are set. */
const LIST_ONLY = { q: "the search", status: "the status filter", due: "the due filter" } as const;

/** The filters GET /jobs/failures takes (a status or a search does not apply to grouped failures: see LIST_ONLY). */
const groupFilter = (filter: JobFilter): GroupFilter => ({
  type: filter.type,
  created_after: filter.created_after,
  created_before: filter.created_before,
  schedule_id: filter.schedule_id,
});

export function FailureGroups(props: { filter: JobFilter; onShowJobs(group: string): void }) {
  const groups = useFailureGroups(groupFilter(props.filter));
  const [action, setAction] = useState<Action | null>(null);
  const narrow = useNarrow();
  const bulk = useAction({
    run: async (action: Action) =>
      (await bulkJobs({ action: action.kind, filter: { ...groupFilter(props.filter), failure_group: action.group.failure_group } })).affected,
    done: (affected, action) => ({
      title: `${action.kind === "replay" ? "Replayed" : "Cancelled"} ${affected.toLocaleString()} job${affected === 1 ? "" : "s"}`,
      message: action.group.sample_error || action.group.message,
    }),
    failed: (action) => `Could not ${action.kind} the group`,
    refresh: bulkRefresh,
    onSuccess: () => setAction(null),
  });
  const busy = bulk.isPending;
  const run = () => action && bulk.mutate(action);

  if (groups.isPending) return <Loading label="Grouping failures…" />;
  if (groups.isError) return <ErrorState error={groups.error} retry={() => void groups.refetch()} />;
  if (groups.data.groups.length === 0)
    return (
      <Stack gap="xs">
        <ListOnlyNote filter={props.filter} />
        <Empty title="No failed jobs">
          {Object.values(groupFilter(props.filter)).some(Boolean) ? "None matches these filters." : "Failed jobs show up here grouped by their error."}
        </Empty>
      </Stack>
    );

  return (
    <Stack gap="xs">
      <ListOnlyNote filter={props.filter} />
      <Paper withBorder>
        <ScrollArea type="auto">
          <Table striped aria-label="Failures grouped by error" data-testid="failure-groups" layout="fixed" miw={narrow ? undefined : 900}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Error</Table.Th>
                <Table.Th w={narrow ? 70 : 90}>Failed</Table.Th>
                {!narrow && <Table.Th w={170}>First seen</Table.Th>}
                {!narrow && <Table.Th w={170}>Last seen</Table.Th>}
                {!narrow && <Table.Th w={210}>Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {groups.data.groups.map((group) => (
                <Table.Tr key={group.failure_group} data-failure-group={group.failure_group}>
                  <Table.Td>
                    <Stack gap={4}>
                      {/* The headline is a real error of the group (its latest), not the pattern it is grouped by (issue 38 #4). */}
                      <Text size="sm" fw={600} lineClamp={3} title={group.sample_error} data-testid="group-headline" style={{ overflowWrap: "break-word" }}>
                        {group.sample_error || group.message}
                      </Text>
                      <Text size="xs" c="dimmed" style={{ overflowWrap: "break-word" }}>
                        {group.type} · latest{" "}
                        <RouterAnchor to="/jobs/$id" params={{ id: group.sample_job_id }} ff="monospace" size="xs">
                          {shortId(group.sample_job_id)}
                        </RouterAnchor>
                        {group.count === 0 ? " · none failed for good yet: all still retrying" : ""}
                      </Text>
                      {narrow && (
                        <>
                          <Text size="xs" c="dimmed">
                            Last seen <Time iso={group.last_seen_at} />
                          </Text>
                          <GroupActions group={group} onAction={setAction} onShowJobs={props.onShowJobs} />
                        </>
                      )}
                    </Stack>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" fw={600}>
                      {group.count.toLocaleString()}
                    </Text>
                    {group.retrying > 0 && (
                      <Text size="xs" c="dimmed">
                        +{group.retrying.toLocaleString()} retrying
                      </Text>
                    )}
                  </Table.Td>
                  {!narrow && (
                    <Table.Td>
                      <Time iso={group.first_seen_at} />
                    </Table.Td>
                  )}
                  {!narrow && (
                    <Table.Td>
                      <Time iso={group.last_seen_at} />
                    </Table.Td>
                  )}
                  {!narrow && (
                    <Table.Td>
                      <GroupActions group={group} onAction={setAction} onShowJobs={props.onShowJobs} />
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollArea>
      </Paper>
      {groups.data.has_more && (
        <Text size="sm" c="dimmed">
          The 100 groups seen most recently; narrow the filters to see older ones.
        </Text>
      )}
      <Confirm
        opened={action !== null}
        title={action?.kind === "replay" ? "Replay this group" : "Cancel this group's retries"}
        confirmLabel={action?.kind === "replay" ? "Replay them" : "Cancel them"}
        color={action?.kind === "replay" ? "indigo" : "red.9"}
        loading={busy}
        onConfirm={run}
        onClose={() => !busy && setAction(null)}
      >
        <Text size="sm" fw={600} lineClamp={3} style={{ overflowWrap: "break-word" }}>
          {action?.group.sample_error || action?.group.message}
        </Text>
        <Text size="sm" mt="xs" data-testid="group-action-count">
          {action?.kind === "replay"
            ? `${action.group.count.toLocaleString()} failed job${action.group.count === 1 ? "" : "s"} of type ${action.group.type} will run again as new jobs (those replayed before are skipped); the originals stay as they are.`
            : `${action?.group.retrying.toLocaleString()} job${action?.group.retrying === 1 ? "" : "s"} waiting to retry after this error will never run again.`}
        </Text>
        <Alert mt="sm" color="gray" variant="light">
          Only the jobs that match the list&apos;s filters are taken.
        </Alert>
      </Confirm>
    </Stack>
  );
}

function GroupActions(props: { group: FailureGroup; onAction(action: Action): void; onShowJobs(group: string): void }) {
  const { group } = props;
  return (
    <Group gap={6}>
      <Button size="compact-xs" variant="default" onClick={() => props.onShowJobs(group.failure_group)}>
        Show jobs
      </Button>
      {group.count > 0 && (
        <Button size="compact-xs" onClick={() => props.onAction({ kind: "replay", group })} aria-label={`Replay the ${group.count} failed jobs of this group`}>
          Replay…
        </Button>
      )}
      {/* Only when some still wait to retry: cancelling failed jobs would cancel none (#3). */}
      {group.retrying > 0 && (
        <Button size="compact-xs" color="red.9" onClick={() => props.onAction({ kind: "cancel", group })}>
          Cancel retries…
        </Button>
      )}
    </Group>
  );
}

/** Says which of the filters set apply to the list only, so grouped counts are never read as filtered by them. */
function ListOnlyNote({ filter }: { filter: JobFilter }) {
  const ignored = (Object.keys(LIST_ONLY) as (keyof typeof LIST_ONLY)[]).filter((key) => filter[key]).map((key) => LIST_ONLY[key]);
  if (ignored.length === 0) return null;
  const names = ignored.length === 1 ? ignored[0] : `${ignored.slice(0, -1).join(", ")} and ${ignored.at(-1)}`;
  return (
    <Text size="sm" c="dimmed" data-testid="failure-groups-list-only">
      Failures by error groups the failed jobs of the type, creation time and schedule chosen; {names} {ignored.length === 1 ? "applies" : "apply"} to the list
      of all jobs only.
    </Text>
  );
}
