// The parts a job's page is made of: a labelled field, a titled section, links to neighbouring jobs, and the
// schedule that made the job.
import { Group, Paper, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { useScheduleName } from "../data/schedules";
import { shortId } from "../ui/format";
import { RouterAnchor } from "../ui/link";

/** The schedule that made the job, by its name (its short id once deleted), opening the jobs it made. */
export function ScheduleField({ id }: { id: string }) {
  const schedule = useScheduleName(id)!;
  return (
    <Field label="Schedule">
      <RouterAnchor to="/jobs" search={{ schedule_id: id }} ff={schedule.known ? undefined : "monospace"} title={`Jobs made by ${schedule.name}`}>
        {schedule.name}
      </RouterAnchor>
      {!schedule.known && (
        <Text span size="xs" c="dimmed">
          {" "}
          (deleted or loading)
        </Text>
      )}
    </Field>
  );
}
/** At most this many neighbours are listed by id; the graph shows them all. */
const LISTED_NEIGHBOURS = 12;

export function JobLinks({ ids, none }: { ids: string[]; none: string }) {
  if (ids.length === 0) return <Text c="dimmed">{none}</Text>;
  return (
    <Group gap="xs" component="span" data-testid="job-links">
      {ids.slice(0, LISTED_NEIGHBOURS).map((id) => (
        <RouterAnchor key={id} to="/jobs/$id" params={{ id }} ff="monospace" aria-label={`Job ${shortId(id)}`}>
          {shortId(id)}
        </RouterAnchor>
      ))}
      {ids.length > LISTED_NEIGHBOURS && (
        <Text span c="dimmed">
          and {ids.length - LISTED_NEIGHBOURS} more (in the graph)
        </Text>
      )}
    </Group>
  );
}

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </div>
  );
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Paper>
  );
}
