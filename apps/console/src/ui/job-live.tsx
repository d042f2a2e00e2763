// A job's progress and output (docs/reference/events.md#progress-and-live-results) as the console shows them: a bar in the jobs list and on the job page, and
// the output on the job page, read again whenever the job's events say it changed (the page's event stream
// invalidates every ["job", id] query, this one among them).
import { Code, Group, Progress, ScrollArea, Stack, Text } from "@mantine/core";
import { useEffect, useRef } from "react";
import type { Schema } from "@conveyor/client";
import { useJobOutput } from "../data/job-detail";
import { ErrorState, Loading } from "./states";

type JobProgress = NonNullable<Schema<"JobListItem">["progress"]>;

const percent = (progress: JobProgress) => Math.round(progress.fraction * 100);

/** The job's last reported progress as a bar with its percentage (and message, unless compact); nothing without one. */
export function JobProgressBar({ progress, status, compact = false }: { progress: JobProgress | null | undefined; status: string; compact?: boolean }) {
  if (!progress) return null;
  const running = status === "processing";
  const label = `${percent(progress)} %${progress.message ? ` — ${progress.message}` : ""}`;
  return (
    <Stack gap={2} mt={4} maw={compact ? 200 : undefined} data-testid="job-progress" title={label}>
      <Progress
        value={percent(progress)}
        size={compact ? "sm" : "md"}
        animated={running}
        color={status === "failed" ? "red" : status === "done" ? "green" : "blue"}
        aria-label={`Progress: ${label}`}
      />
      <Text size="xs" c="dimmed" lineClamp={1} data-testid="job-progress-label">
        {compact ? `${percent(progress)} %` : label}
      </Text>
    </Stack>
  );
}

/** The job's output, whole, following its end while new text arrives. */
export function JobOutput({ jobId }: { jobId: string }) {
  const output = useJobOutput(jobId);
  const viewport = useRef<HTMLDivElement>(null);
  const text = output.data?.output ?? "";
  useEffect(() => {
    viewport.current?.scrollTo({ top: viewport.current.scrollHeight });
  }, [text]);
  if (output.isPending) return <Loading label="Loading the output…" />;
  if (output.isError) return <ErrorState error={output.error} retry={() => void output.refetch()} title="Could not load the output" />;
  if (!text) return <Text c="dimmed">The handler has written no output.</Text>;
  return (
    <Stack gap={4}>
      <ScrollArea.Autosize mah={360} viewportRef={viewport}>
        <Code block data-testid="job-output" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
          {text}
        </Code>
      </ScrollArea.Autosize>
      <Group justify="flex-end">
        <Text size="xs" c="dimmed">
          {output.data!.bytes.toLocaleString("en")} bytes
        </Text>
      </Group>
    </Stack>
  );
}
