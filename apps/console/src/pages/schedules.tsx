// Schedules (SPEC §9): the list, a form to create or edit one with a cron helper showing the next five runs in
// the schedule's time zone (croner, read as the API reads it: five fields), pause and resume, delete.
import { Box, Button, Flex, Group, Paper, ScrollArea, Switch, Table, Text, Title, Stack, VisuallyHidden } from "@mantine/core";
import { Fragment, useState } from "react";
import { api, call } from "../api";
import { Confirm, useConfirmedAction } from "../ui/confirm";
import { cronInWords } from "../ui/cron-words";
import { ZonedTime } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { ErrorState, Empty, Loading } from "../ui/states";
import { ScheduleForm, type Schedule } from "./schedule-form";
import { useAction } from "../data/actions";
import { keys } from "../data/keys";
import { useSchedules } from "../data/schedules";

/** A cron expression that wraps only between its five fields, never inside one ("*\/1" and "5" on two lines). */
function CronText({ cron, zone }: { cron: string; zone?: string }) {
  const fields = cron.trim().split(/\s+/);
  return (
    <span data-testid="cron" style={{ fontFamily: "var(--mantine-font-family-monospace)" }}>
      {fields.map((field, i) => (
        <Fragment key={i}>
          {i > 0 && " "}
          <span style={{ whiteSpace: "nowrap" }}>{field}</span>
        </Fragment>
      ))}
      {zone && <span style={{ fontFamily: "var(--mantine-font-family)" }}> · {zone}</span>}
    </span>
  );
}

/** The expression in words, under it (nothing when cronstrue cannot read it). */
function CronWords({ cron }: { cron: string }) {
  const words = cronInWords(cron);
  return words ? (
    <Text size="xs" data-testid="cron-words">
      {words}
    </Text>
  ) : null;
}

export function SchedulesPage() {
  const schedules = useSchedules();
  const [editing, setEditing] = useState<Schedule | "new" | null>(null);
  const deleting = useConfirmedAction<Schedule>({
    queryKey: keys.schedules.all,
    failed: "Could not delete the schedule",
    run: async (schedule) => {
      await call(api.DELETE("/schedules/{id}", { params: { path: { id: schedule.id } } }));
      return `“${schedule.name}” deleted.`;
    },
  });

  const pausing = useAction({
    run: ({ schedule, paused }: { schedule: Schedule; paused: boolean }) =>
      call(api.PATCH("/schedules/{id}", { params: { path: { id: schedule.id } }, body: { paused } })),
    done: (_, { schedule, paused }) => `“${schedule.name}” ${paused ? "paused" : "resumed"}.`,
    failed: "Could not change the schedule",
    refresh: () => [keys.schedules.all],
  });

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Schedules
        </Title>
        <Button onClick={() => setEditing("new")}>New schedule</Button>
      </Group>
      {schedules.isPending ? (
        <Loading label="Loading schedules…" />
      ) : schedules.isError ? (
        <ErrorState error={schedules.error} retry={() => void schedules.refetch()} />
      ) : schedules.data.length === 0 ? (
        <Empty title="No schedules yet">A schedule creates a job on a cron timetable, e.g. a report every Monday at 8:00.</Empty>
      ) : (
        <Paper withBorder>
          <ScrollArea type="auto">
            <Table miw={{ base: 0, sm: 760 }} aria-label="Schedules">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th visibleFrom="sm">When</Table.Th>
                  <Table.Th visibleFrom="sm">Job</Table.Th>
                  <Table.Th visibleFrom="sm">Next run</Table.Th>
                  <Table.Th visibleFrom="sm">Last run</Table.Th>
                  <Table.Th>Active</Table.Th>
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {schedules.data.map((schedule) => (
                  <Table.Tr key={schedule.id} data-schedule={schedule.name}>
                    <Table.Td style={{ wordBreak: "break-word" }}>
                      {schedule.name}
                      {/* A phone shows when it runs under its name instead of in columns of their own. */}
                      <Box hiddenFrom="sm">
                        <Text size="xs">
                          <CronText cron={schedule.cron} zone={schedule.timezone} />
                        </Text>
                        <CronWords cron={schedule.cron} />
                        <Text size="xs" c="dimmed">
                          {schedule.paused ? (
                            "Paused"
                          ) : (
                            <>
                              Next: <ZonedTime iso={schedule.next_run_at} timeZone={schedule.timezone} />
                            </>
                          )}
                        </Text>
                      </Box>
                    </Table.Td>
                    <Table.Td visibleFrom="sm">
                      <Text size="sm">
                        <CronText cron={schedule.cron} />
                      </Text>
                      <CronWords cron={schedule.cron} />
                      <Text size="xs" c="dimmed">
                        {schedule.timezone}
                      </Text>
                    </Table.Td>
                    <Table.Td visibleFrom="sm">
                      <RouterAnchor to="/jobs" search={{ schedule_id: schedule.id }} size="sm" title={`Jobs of ${schedule.name}`}>
                        {schedule.job.type}
                      </RouterAnchor>
                    </Table.Td>
                    <Table.Td visibleFrom="sm">{schedule.paused ? "Paused" : <ZonedTime iso={schedule.next_run_at} timeZone={schedule.timezone} />}</Table.Td>
                    <Table.Td visibleFrom="sm">
                      <ZonedTime iso={schedule.last_run_at} timeZone={schedule.timezone} />
                    </Table.Td>
                    <Table.Td>
                      <Switch
                        checked={!schedule.paused}
                        onChange={(e) => pausing.mutate({ schedule, paused: !e.currentTarget.checked })}
                        aria-label={`${schedule.paused ? "Resume" : "Pause"} ${schedule.name}`}
                      />
                    </Table.Td>
                    <Table.Td>
                      <Flex gap={4} direction={{ base: "column", sm: "row" }} wrap="nowrap">
                        <Button size="xs" variant="light" onClick={() => setEditing(schedule)} aria-label={`Edit ${schedule.name}`}>
                          Edit
                        </Button>
                        <Button size="xs" variant="outline" color="red.9" onClick={() => deleting.ask(schedule)} aria-label={`Delete ${schedule.name}`}>
                          Delete
                        </Button>
                      </Flex>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollArea>
        </Paper>
      )}
      <ScheduleForm schedule={editing} onClose={() => setEditing(null)} />
      <Confirm
        opened={deleting.target !== null}
        title="Delete this schedule?"
        confirmLabel="Delete"
        loading={deleting.busy}
        onConfirm={() => void deleting.confirm()}
        onClose={deleting.cancel}
      >
        “{deleting.target?.name}” stops creating jobs. Jobs it already created stay.
      </Confirm>
    </Stack>
  );
}
