// Retries (issue 38; Sidekiq's Retries tab): the jobs that failed an attempt and will try again, soonest first, each
// with its last error and when the next attempt is due — "Retry now" (POST /jobs/{id}/run-now) and "Give up"
// (POST /jobs/{id}/cancel: it never runs again). Read again every few seconds and on each live event of its jobs.
import { Button, Group, Paper, Stack, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { useAction } from "../data/actions";
import { keys } from "../data/keys";
import { Confirm } from "../ui/confirm";
import { shortId, Time } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { Empty, ErrorState, Loading } from "../ui/states";

type Retrying = ResponseBody<"/jobs/retries", "get">["items"][number];

export const retriesQuery = () => ({
  queryKey: keys.retries.all,
  queryFn: () => call(api.GET("/jobs/retries", { params: { query: { limit: 100 } } })),
  refetchInterval: 5_000,
});

export function RetriesPage() {
  const retries = useQuery(retriesQuery());
  const [givingUp, setGivingUp] = useState<Retrying | null>(null);
  const refresh = (job: Retrying) => [keys.retries.all, keys.job.detail(job.id), keys.jobs.all];
  const retryNow = useAction({
    run: (job: Retrying) => call(api.POST("/jobs/{id}/run-now", { params: { path: { id: job.id } } })),
    done: (_job, input) => `${input.type} ${shortId(input.id)} retries now.`,
    failed: (job) => `Could not retry ${job.type} ${shortId(job.id)} now`,
    refresh,
  });
  const giveUp = useAction({
    run: (job: Retrying) => call(api.POST("/jobs/{id}/cancel", { params: { path: { id: job.id } } })),
    done: (_job, input) => `Gave up ${input.type} ${shortId(input.id)}: it will not be retried.`,
    failed: (job) => `Could not give up ${job.type} ${shortId(job.id)}`,
    refresh,
    onSuccess: () => setGivingUp(null),
  });

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
      ) : retries.data.items.length === 0 ? (
        <Empty title="No job is waiting to retry">A job that fails an attempt with retries left shows up here until its next attempt.</Empty>
      ) : (
        <Stack component="ul" gap="xs" p={0} m={0} aria-label="Jobs waiting to retry" style={{ listStyle: "none" }}>
          {retries.data.items.map((job) => (
            <Paper component="li" withBorder p="sm" key={job.id} data-job-id={job.id}>
              <Group justify="space-between" align="flex-start" gap="xs">
                <Stack gap={2} miw={0} style={{ flex: "1 1 260px" }}>
                  <Text size="sm" fw={600}>
                    <RouterAnchor to="/jobs/$id" params={{ id: job.id }} size="sm">
                      {job.type} {shortId(job.id)}
                    </RouterAnchor>{" "}
                    · attempt {job.retries + 1} of {job.max_retries + 1} next
                  </Text>
                  {job.error && (
                    <Text size="sm" c="red.9" lineClamp={3} title={job.error} style={{ overflowWrap: "break-word" }} data-testid="retry-error">
                      {job.error}
                    </Text>
                  )}
                  <Text size="xs" c="dimmed" data-testid="next-attempt">
                    Next attempt <Time iso={job.next_attempt_at} />
                  </Text>
                </Stack>
                <Group gap={6}>
                  <Button
                    size="xs"
                    loading={retryNow.isPending && retryNow.variables?.id === job.id}
                    onClick={() => retryNow.mutate(job)}
                    aria-label={`Retry now: ${job.type} ${shortId(job.id)}`}
                  >
                    Retry now
                  </Button>
                  <Button size="xs" variant="outline" color="red.9" onClick={() => setGivingUp(job)} aria-label={`Give up: ${job.type} ${shortId(job.id)}`}>
                    Give up…
                  </Button>
                </Group>
              </Group>
            </Paper>
          ))}
        </Stack>
      )}
      {retries.data?.has_more && (
        <Text size="sm" c="dimmed">
          The 100 due soonest; more are waiting.
        </Text>
      )}
      <Confirm
        opened={givingUp !== null}
        title="Give up this job"
        confirmLabel="Give up"
        loading={giveUp.isPending}
        onConfirm={() => givingUp && giveUp.mutate(givingUp)}
        onClose={() => !giveUp.isPending && setGivingUp(null)}
      >
        {givingUp && `${givingUp.type} ${shortId(givingUp.id)} is cancelled and will not be retried. Its attempts and logs stay.`}
      </Confirm>
    </Stack>
  );
}
