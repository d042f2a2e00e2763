// The jobs list on a phone: each job a card (issue 38) — what it is, its status and error, when — the whole width of
// the screen, nothing cut off at the side (the table was 368 px inside 341).
import { Checkbox, Group, Paper, Stack, Text } from "@mantine/core";
import { jobDuration, shortId, StatusBadge, Time } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { WaitingNote } from "../ui/waiting";
import { durationText, MatchedPath, When, type JobSelection } from "./jobs-rows";

export function JobCards(props: JobSelection) {
  return (
    <Stack gap="xs">
      <Checkbox label="Select every job on this page" checked={props.pageChecked} indeterminate={props.pageIndeterminate} onChange={props.onTogglePage} />
      <Stack component="ul" gap="xs" aria-label="Jobs" data-testid="jobs-cards" p={0} m={0} style={{ listStyle: "none" }}>
        {props.rows.map((row) => (
          <Paper component="li" withBorder p="xs" key={row.id} data-job-id={row.id} data-status={row.status} style={{ minWidth: 0 }}>
            <Group gap="xs" wrap="nowrap" align="flex-start">
              <Checkbox mt={2} aria-label={`Select job ${row.id}`} checked={props.isChecked(row.id)} onChange={() => props.onToggle(row.id)} />
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
