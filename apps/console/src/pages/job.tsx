// One job: its fields, payload, result and error, its dependency graph (when it is in one), each attempt's timing
// (GET /jobs/{id}/attempts, drawn on one time axis) with its log lines, the artifact (previewed and downloadable),
// the M-Pesa callback when there is one, and cancel or replay. It follows the job's own event stream, so its status,
// attempts and logs change on screen as the worker reports.
import { Alert, Group, Paper, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useParams } from "@tanstack/react-router";
import { lazy, Suspense } from "react";
import { ApiError } from "../api";
import { useJob } from "../data/job-detail";
import { FINAL_STATUSES, JsonBlock, shortId, StatusBadge, Time } from "../ui/format";
import { JobOutput, JobProgressBar } from "../ui/job-live";
import { RouterAnchor } from "../ui/link";
import { CopyValue } from "../ui/secret";
import { ErrorState, Loading } from "../ui/states";
import { WaitingReason } from "../ui/waiting";
import { JobActions } from "./job-actions";
import { Artifact } from "./job-artifact";
import { Attempts } from "./job-attempts";
import { JobNotFound } from "./job-not-found";
import { Field, JobLinks, ScheduleField, Section } from "./job-parts";
import { JobSteps } from "./job-steps";

// The graph library loads only for a job that has dependencies or dependents.
const JobGraphView = lazy(() => import("./job-graph").then((module) => ({ default: module.JobGraphView })));

export function JobPage() {
  const { id } = useParams({ strict: false }) as { id: string };
  // Read again while unfinished, and the job and its attempts kept in step (data/job-detail.ts).
  const { job, logs, attempts } = useJob(id);

  if (job.isPending) return <Loading label="Loading the job…" />;
  if (job.isError && job.error instanceof ApiError && job.error.status === 404) return <JobNotFound id={id} />;
  if (job.isError) return <ErrorState error={job.error} retry={() => void job.refetch()} title="Could not load the job" />;
  const data = job.data;
  const callback =
    data.type === "mobile_money_stk" && data.result && typeof data.result === "object" ? (data.result as Record<string, unknown>).callback : undefined;

  return (
    <Stack>
      <RouterAnchor to="/jobs" size="sm">
        ← All jobs
      </RouterAnchor>
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Group gap="xs">
            <Title order={1} size="h2" data-page-title={`${data.type} ${shortId(data.id)}`}>
              {data.type}
            </Title>
            <StatusBadge status={data.status} />
          </Group>
          <Group gap={4} wrap="nowrap">
            <Text ff="monospace" size="sm" c="dimmed" style={{ overflowWrap: "anywhere" }}>
              {data.id}
            </Text>
            <CopyValue value={data.id} what="job id" />
          </Group>
        </Stack>
        <JobActions job={data} />
      </Group>
      <WaitingReason job={data} />

      <Paper withBorder p="md">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="md">
          <Field label="Priority">{data.priority}</Field>
          {data.status === "pending" ? (
            <Field label={data.retries > 0 ? "Next attempt due" : "Due"}>
              {/* No run_at: due since it was created. */}
              <Time iso={data.run_at ?? data.created_at} />
            </Field>
          ) : FINAL_STATUSES.includes(data.status) ? (
            <Field label="Finished">
              <Time iso={data.updated_at} />
            </Field>
          ) : null}
          <Field label="Retries">
            {data.retries} of {data.max_retries}
          </Field>
          <Field label="Created">
            <Time iso={data.created_at} />
          </Field>
          <Field label="Updated">
            <Time iso={data.updated_at} />
          </Field>
          {data.cancel_requested_at && (
            <Field label="Cancellation requested">
              <Time iso={data.cancel_requested_at} />
            </Field>
          )}
          {data.replay_of && (
            <Field label="Replay of">
              <RouterAnchor to="/jobs/$id" params={{ id: data.replay_of }} ff="monospace">
                {shortId(data.replay_of)}
              </RouterAnchor>
            </Field>
          )}
          {data.replayed_as.length > 0 && (
            <Field label={data.replayed_as.length === 1 ? "Replayed as" : `Replayed as (${data.replayed_as.length})`}>
              <Group gap="xs">
                {data.replayed_as.map((id) => (
                  <RouterAnchor key={id} to="/jobs/$id" params={{ id }} ff="monospace">
                    {shortId(id)}
                  </RouterAnchor>
                ))}
              </Group>
            </Field>
          )}
          {data.schedule_id && <ScheduleField id={data.schedule_id} />}
        </SimpleGrid>
      </Paper>

      {data.error && (
        <Alert color="red" title="Error" role="note">
          <Text size="sm" c="var(--mantine-color-text)" style={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }} data-testid="job-error">
            {data.error}
          </Text>
        </Alert>
      )}

      {(data.depends_on.length > 0 || data.dependents.length > 0) && (
        <Section title="Dependencies">
          <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="md" mb="sm">
            <Field label="Waits for">
              <JobLinks ids={data.depends_on} none="No job" />
            </Field>
            <Field label="Needed by">
              <JobLinks ids={data.dependents} none="No job" />
            </Field>
          </SimpleGrid>
          <Suspense fallback={<Loading label="Loading the graph…" />}>
            <JobGraphView id={data.id} />
          </Suspense>
        </Section>
      )}

      {(data.progress || data.started_at !== null) && (
        <Section title="Progress and output">
          <JobProgressBar progress={data.progress} status={data.status} />
          <JobOutput jobId={data.id} />
        </Section>
      )}

      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Section title="Payload">
          <JsonBlock value={data.payload} label="Payload" />
        </Section>
        <Section title="Result">
          {data.result === null ? (
            <Text c="dimmed">
              {data.status === "done"
                ? "The handler returned no result."
                : FINAL_STATUSES.includes(data.status)
                  ? "No result: the job did not succeed."
                  : "No result yet."}
            </Text>
          ) : (
            <JsonBlock value={data.result} label="Result" />
          )}
        </Section>
      </SimpleGrid>

      {callback !== undefined && (
        <Section title="M-Pesa callback">
          <JsonBlock value={callback} label="M-Pesa callback" />
        </Section>
      )}

      {data.status === "done" && (data.type === "generate_pdf" || data.type === "compress_image") && (
        <Section title="Artifact">
          <Artifact jobId={data.id} type={data.type} />
        </Section>
      )}

      <Section title="Attempts">
        {logs.isPending || attempts.isPending ? (
          <Loading label="Loading the attempts…" />
        ) : logs.isError ? (
          <ErrorState error={logs.error} retry={() => void logs.refetch()} title="Could not load the logs" />
        ) : attempts.isError ? (
          <ErrorState error={attempts.error} retry={() => void attempts.refetch()} title="Could not load the attempts" />
        ) : (
          <Attempts attempts={attempts.data} logs={logs.data} status={data.status} />
        )}
        <JobSteps steps={data.steps} />
      </Section>
    </Stack>
  );
}
