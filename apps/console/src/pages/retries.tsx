// Retries (issue 38; Sidekiq's Retries tab, Oban Web's retryable jobs): the jobs that failed an attempt and will try
// again, soonest first, each with its last error and when the next attempt is due (from now) — "Retry now" and "Give
// up" on one, or on all the listed ones of a type at once. The list holds still under the pointer (issue 48 #6).
import { Button, Group, Paper, Select, Stack, Text, Title } from "@mantine/core";
import { useMemo, useState } from "react";
import { retryOrder, useRetries, RETRIES_SHOWN, useRetryActions, type Retrying } from "../data/retries";
import { Confirm } from "../ui/confirm";
import { shortId } from "../ui/format";
import { useHeldList } from "../ui/held";
import { RouterAnchor } from "../ui/link";
import { RelativeTime } from "../ui/relative-time";
import { Empty, ErrorState, Loading } from "../ui/states";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function RetriesPage() {
  const retries = useRetries();
  const [type, setType] = useState<string | null>(null);
  const [givingUp, setGivingUp] = useState<Retrying | null>(null);
  const [bulk, setBulk] = useState<"retry" | "give-up" | null>(null);
  const all = useMemo(() => [...(retries.data?.items ?? [])].sort(retryOrder), [retries.data]);
  const types = useMemo(() => [...new Set(all.map((job) => job.type))].sort(), [all]);
  const matching = useMemo(() => (type ? all.filter((job) => job.type === type) : all), [all, type]);
  const held = useHeldList(matching);
  const actions = useRetryActions({
    onDone: (id) => {
      held.drop(id);
      setGivingUp(null);
    },
    onBulkDone: () => setBulk(null),
  });
  const ids = matching.map((job) => job.id);
  const more = retries.data?.has_more ?? false;
  const counted = `${plural(matching.length, "job")}${type ? ` of type ${type}` : ""}${more ? ` (the first ${RETRIES_SHOWN} due)` : ""}`;

  return (
    <Stack>
      <Title order={1} size="h2">
        Retries
      </Title>
      <Text c="dimmed" size="sm">
        Jobs that failed an attempt and will try again, the soonest first. Retry one now instead of waiting, or give it up: it is cancelled and never runs
        again.
      </Text>
      {retries.isPending ? (
        <Loading label="Loading retries…" />
      ) : retries.isError ? (
        <ErrorState error={retries.error} retry={() => void retries.refetch()} />
      ) : all.length === 0 ? (
        <Empty title="No job is waiting to retry">A job that fails an attempt with retries left shows up here until its next attempt.</Empty>
      ) : (
        <>
          <Group justify="space-between" align="flex-end" gap="xs">
            <Select
              label="Job type"
              placeholder="Every type"
              data={types}
              value={type}
              onChange={setType}
              clearable
              w={{ base: "100%", xs: 240 }}
              comboboxProps={{ withinPortal: true }}
            />
            <Group gap="xs">
              <Button size="xs" variant="default" onClick={() => setBulk("retry")} disabled={matching.length === 0}>
                Retry all ({matching.length})…
              </Button>
              <Button size="xs" variant="outline" color="red.9" onClick={() => setBulk("give-up")} disabled={matching.length === 0}>
                Give up all ({matching.length})…
              </Button>
            </Group>
          </Group>
          <Text size="sm" data-testid="retries-count" aria-live="polite">
            {plural(matching.length, "job")} waiting to retry{type ? ` (${type})` : ""}
            {more ? `; the first ${RETRIES_SHOWN} due are listed` : ""}
            {held.waiting > 0 && (
              <Text span size="sm" c="dimmed" data-testid="retries-held">
                {" "}
                · the list holds still under your pointer; {plural(held.waiting, "change")} when you move away
              </Text>
            )}
          </Text>
          <Stack component="ul" gap="xs" p={0} m={0} aria-label="Jobs waiting to retry" style={{ listStyle: "none" }} {...held.bind}>
            {held.rows.map((job) => (
              <RetryRow
                key={job.id}
                job={job}
                gone={Boolean(job.gone)}
                retrying={actions.retryNow.isPending && actions.retryNow.variables?.id === job.id}
                onRetry={() => actions.retryNow.mutate(job)}
                onGiveUp={() => setGivingUp(job)}
              />
            ))}
          </Stack>
        </>
      )}
      <Confirm
        opened={givingUp !== null}
        title="Give up this job"
        confirmLabel="Give up"
        loading={actions.giveUp.isPending}
        onConfirm={() => givingUp && actions.giveUp.mutate(givingUp)}
        onClose={() => !actions.giveUp.isPending && setGivingUp(null)}
      >
        {givingUp && `${givingUp.type} ${shortId(givingUp.id)} is cancelled and will not be retried. Its attempts and logs stay.`}
      </Confirm>
      <Confirm
        opened={bulk !== null}
        title={bulk === "retry" ? `Retry ${counted} now?` : `Give up ${counted}?`}
        confirmLabel={bulk === "retry" ? `Retry ${matching.length} now` : `Give up ${matching.length}`}
        color={bulk === "retry" ? "blue" : "red.9"}
        loading={actions.retryAll.isPending || actions.giveUpAll.isPending}
        onConfirm={() => (bulk === "retry" ? actions.retryAll.mutate(ids) : actions.giveUpAll.mutate(ids))}
        onClose={() => !(actions.retryAll.isPending || actions.giveUpAll.isPending) && setBulk(null)}
      >
        <span data-testid="bulk-retries-text">
          {bulk === "retry"
            ? `Each of the ${plural(matching.length, "job")} listed is due at once, without waiting out its retry's wait.`
            : `Each of the ${plural(matching.length, "job")} listed is cancelled and will not be retried. Their attempts and logs stay.`}
          {more ? " Jobs beyond the listed ones are not touched." : ""}
        </span>
      </Confirm>
    </Stack>
  );
}

function RetryRow(props: { job: Retrying; gone: boolean; retrying: boolean; onRetry(): void; onGiveUp(): void }) {
  const { job, gone } = props;
  const name = `${job.type} ${shortId(job.id)}`;
  return (
    <Paper component="li" withBorder p="sm" data-job-id={job.id} data-gone={gone || undefined} style={gone ? { opacity: 0.6 } : undefined}>
      <Group justify="space-between" align="flex-start" gap="xs">
        <Stack gap={2} miw={0} style={{ flex: "1 1 260px" }}>
          <Text size="sm" fw={600}>
            <RouterAnchor to="/jobs/$id" params={{ id: job.id }} size="sm">
              {name}
            </RouterAnchor>{" "}
            · attempt {job.retries + 1} of {job.max_retries + 1} next
          </Text>
          {job.error && (
            <Text size="sm" c="red.9" lineClamp={3} title={job.error} style={{ overflowWrap: "break-word" }} data-testid="retry-error">
              {job.error}
            </Text>
          )}
          <Text size="xs" c="dimmed" data-testid="next-attempt">
            {gone ? (
              "No longer waiting to retry (it started, or was given up)"
            ) : (
              <>
                Next attempt <RelativeTime iso={job.next_attempt_at} />
              </>
            )}
          </Text>
        </Stack>
        {!gone && (
          <Group gap={6}>
            <Button size="xs" loading={props.retrying} onClick={props.onRetry} aria-label={`Retry now: ${name}`}>
              Retry now
            </Button>
            <Button size="xs" variant="outline" color="red.9" onClick={props.onGiveUp} aria-label={`Give up: ${name}`}>
              Give up…
            </Button>
          </Group>
        )}
      </Group>
    </Paper>
  );
}
