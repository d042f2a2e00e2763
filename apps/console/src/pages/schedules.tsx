// Schedules (docs/reference/time.md#time-priority-and-fairness): the list, a form to create or edit one with a cron helper showing the next five runs in
// the schedule's time zone (croner, read as the API reads it: five fields), pause and resume, delete.
import { Box, Button, Switch, Table, Text, Stack } from "@mantine/core";
import { Fragment, useState } from "react";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { cronInWords } from "../ui/cron-words";
import { ZonedTime } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { ActionsHeader, EditDeleteButtons, ListTable, QueryList } from "../ui/list";
import { Heading } from "../ui/page";
import { ScheduleForm, type Schedule } from "./schedule-form";
import { useAction } from "../data/actions";
import { deleteSchedule, pauseSchedule, schedulesKey, schedulesRefresh, useSchedules } from "../data/schedules";

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
    queryKey: schedulesKey,
    failed: "Could not delete the schedule",
    run: async (schedule) => {
      await deleteSchedule(schedule.id);
      return `“${schedule.name}” deleted.`;
    },
  });

  const pausing = useAction({
    run: ({ schedule, paused }: { schedule: Schedule; paused: boolean }) => pauseSchedule({ id: schedule.id, paused }),
    done: (_, { schedule, paused }) => `“${schedule.name}” ${paused ? "paused" : "resumed"}.`,
    failed: "Could not change the schedule",
    refresh: schedulesRefresh,
  });

  return (
    <Stack>
      <Heading action={<Button onClick={() => setEditing("new")}>New schedule</Button>}>Schedules</Heading>
      <QueryList
        query={schedules}
        loading="Loading schedules…"
        empty={{ title: "No schedules yet", children: "A schedule creates a job on a cron timetable, e.g. a report every Monday at 8:00." }}
      >
        {(rows) => (
          <ListTable
            label="Schedules"
            minWidth={760}
            head={
              <>
                <Table.Th>Name</Table.Th>
                <Table.Th visibleFrom="sm">When</Table.Th>
                <Table.Th visibleFrom="sm">Job</Table.Th>
                <Table.Th visibleFrom="sm">Next run</Table.Th>
                <Table.Th visibleFrom="sm">Last run</Table.Th>
                <Table.Th>Active</Table.Th>
                <ActionsHeader />
              </>
            }
          >
            {rows.map((schedule) => (
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
                  <EditDeleteButtons name={schedule.name} onEdit={() => setEditing(schedule)} onDelete={() => deleting.ask(schedule)} />
                </Table.Td>
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      <ScheduleForm schedule={editing} onClose={() => setEditing(null)} />
      <ConfirmAction action={deleting} title="Delete this schedule?" confirmLabel="Delete">
        “{deleting.target?.name}” stops creating jobs. Jobs it already created stay.
      </ConfirmAction>
    </Stack>
  );
}
