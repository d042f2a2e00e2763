// One job: its fields, payload, result and error, its dependency graph (when it is in one), each attempt's timing
// (GET /jobs/{id}/attempts, drawn on one time axis) with its log lines, the artifact (previewed and downloadable),
// the M-Pesa callback when there is one, and cancel or replay. It follows the job's own event stream, so its status,
// attempts and logs change on screen as the worker reports.
import { Alert, Badge, Box, Button, Group, Paper, SimpleGrid, Stack, Text, Timeline, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { lazy, Suspense, useEffect, useRef, useState, type ReactNode } from "react";
import type { ResponseBody } from "@conveyor/client";
import { api, ApiError, call } from "../api";
import { useAction } from "../data/actions";
import { keys } from "../data/keys";
import { jobElsewhereQuery, useLookIn } from "../data/job";
import { useScheduleName } from "../data/schedules";
import { useSession } from "../session";
import { Confirm } from "../ui/confirm";
import { FINAL_STATUSES, formatDuration, JsonBlock, shortId, StatusBadge, Time } from "../ui/format";
import { CopyValue } from "../ui/secret";
import { ErrorState, Loading } from "../ui/states";
import { Artifact } from "./job-artifact";
import { JobSteps } from "./job-steps";
import { ReplayDialog } from "./replay-dialog";
import { RouterAnchor } from "../ui/link";
import { JobOutput, JobProgressBar } from "../ui/job-live";
import { WaitingReason } from "../ui/waiting";

// The graph library loads only for a job that has dependencies or dependents.
const JobGraphView = lazy(() => import("./job-graph").then((module) => ({ default: module.JobGraphView })));

type Job = ResponseBody<"/jobs/{id}", "get">;
type LogLine = ResponseBody<"/jobs/{id}/logs", "get">[number];

/** How often an unfinished job's page reads it again: a running one often, a pending one less (its wait is long). */
function unfinishedInterval(status: string | undefined): number | false {
  if (status === undefined || FINAL_STATUSES.includes(status)) return false;
  return status === "pending" ? 5_000 : 2_000;
}

const LEVEL_COLORS: Record<string, string> = { info: "gray", warn: "orange", error: "red" };

export function JobPage() {
  const { id } = useParams({ strict: false }) as { id: string };
  // Its events come through the tab's one stream (live.ts), which refreshes this job's queries. The page does not
  // trust the stream alone (issue 48 #1: a page stayed on PROCESSING for good when the event that ended the job
  // never reached it): while the job is not finished its page reads it again every few seconds, and a pending job's
  // reason for waiting changes without an event of its own anyway (a queue paused, a slot freed).
  const job = useQuery({
    queryKey: keys.job.detail(id),
    queryFn: () => call(api.GET("/jobs/{id}", { params: { path: { id } } })),
    refetchInterval: (query) => unfinishedInterval(query.state.data?.status),
  });
  const unfinished = unfinishedInterval(job.data?.status);
  const logs = useQuery({
    queryKey: keys.job.logs(id),
    queryFn: () => call(api.GET("/jobs/{id}/logs", { params: { path: { id } } })),
    refetchInterval: unfinished,
  });
  const attempts = useQuery({
    queryKey: keys.job.attempts(id),
    queryFn: () => call(api.GET("/jobs/{id}/attempts", { params: { path: { id } } })),
    refetchInterval: unfinished,
  });
  // Read apart, the job and its attempts can tell two moments (the job read while running, its attempts after it
  // ended): an attempt that ended the job means the job is read again at once, not at the next interval.
  const lastOutcome = attempts.data?.at(-1)?.outcome;
  const stale =
    job.data !== undefined &&
    !FINAL_STATUSES.includes(job.data.status) &&
    (lastOutcome === "succeeded" || lastOutcome === "failed" || lastOutcome === "cancelled");
  useEffect(() => {
    if (stale) void job.refetch();
  }, [stale, job]);
  // And the other way: a job that changed status (read again above) has its attempts and lines read again with it.
  const queryClient = useQueryClient();
  const status = job.data?.status;
  const seen = useRef(status);
  useEffect(() => {
    if (seen.current === status) return;
    seen.current = status;
    for (const queryKey of [keys.job.attempts(id), keys.job.logs(id)]) void queryClient.invalidateQueries({ queryKey, exact: true });
  }, [status, id, queryClient]);

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

/** The schedule that made the job, by its name (its short id once deleted), opening the jobs it made. */
function ScheduleField({ id }: { id: string }) {
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

/**
 * A job id this organization has no job of (issue 23 #9): said plainly, with no "try again" (asking again finds
 * nothing more), and — for a person in several organizations — a way to look in the one that has it.
 */
function JobNotFound({ id }: { id: string }) {
  const session = useSession();
  // Offered only where the job is (issue 48 #10): asked of the API, which looks in the person's other organizations.
  const elsewhere = useQuery({ ...jobElsewhereQuery(id), enabled: session.orgs.length > 1 });
  const others = elsewhere.data ?? [];
  const lookIn = useLookIn();
  return (
    <Stack>
      <RouterAnchor to="/jobs" size="sm">
        ← All jobs
      </RouterAnchor>
      <Title order={1} size="h2">
        Job not found
      </Title>
      <Alert color="gray" role="alert" title={`Not in ${session.org.name}`}>
        <Stack gap="xs">
          {/* Prose breaks between words; only the id, one long word, may break anywhere (and only where it must). */}
          <Text size="sm" style={{ wordBreak: "normal" }} data-testid="missing-job-text">
            A job with the id “<span style={{ overflowWrap: "anywhere" }}>{id}</span>” was not found in {session.org.name}: the address may be mistyped, or the
            job was deleted after its retention period.
          </Text>
          {others.length > 0 && (
            <>
              <Text size="sm">It belongs to another of your organizations:</Text>
              <Group gap="xs">
                {others.map((org) => (
                  <Button
                    key={org.id}
                    size="xs"
                    variant="default"
                    loading={lookIn.isPending && lookIn.variables === org.id}
                    onClick={() => lookIn.mutate(org.id)}
                  >
                    Look in {org.name}
                  </Button>
                ))}
              </Group>
            </>
          )}
        </Stack>
      </Alert>
    </Stack>
  );
}

/** At most this many neighbours are listed by id; the graph shows them all. */
const LISTED_NEIGHBOURS = 12;

function JobLinks({ ids, none }: { ids: string[]; none: string }) {
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

function Field({ label, children }: { label: string; children: ReactNode }) {
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

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Paper>
  );
}

type Attempt = ResponseBody<"/jobs/{id}/attempts", "get">[number];
type Outcome = Attempt["outcome"];

const OUTCOME_WORDS: Record<Outcome, string> = {
  succeeded: "succeeded",
  failed: "failed",
  retried: "failed, retried",
  released: "released by a worker shutting down",
  interrupted: "interrupted",
  cancelled: "cancelled",
  running: "running",
  suspended: "paused",
};
/** Mantine colours of each outcome, in the timeline's bullets and bars. */
const OUTCOME_COLORS: Record<Outcome, string> = {
  succeeded: "green.9",
  failed: "red.9",
  retried: "red.9",
  released: "gray",
  interrupted: "orange.9",
  cancelled: "orange.9",
  running: "blue",
  suspended: "gray",
};
const cssColor = (color: string) => {
  const [name, shade] = color.split(".");
  return `var(--mantine-color-${name}-${shade ?? 6})`;
};

const at = (iso: string) => new Date(iso).getTime();

/** "Attempt 1: succeeded"; a sleep or a wait says what it paused for, and the part after it that it resumed. */
function attemptTitle(attempt: Attempt): string {
  const name = attempt.resumed ? `Attempt ${attempt.attempt} (resumed)` : `Attempt ${attempt.attempt}`;
  const { suspension } = attempt;
  if (attempt.outcome === "suspended" && suspension) return `${name}: ${suspension.kind === "wait" ? "waited for waitpoint" : "slept"} “${suspension.step}”`;
  return `${name}: ${OUTCOME_WORDS[attempt.outcome]}`;
}

/**
 * Each attempt on one time axis (issue 23, attempt timing): a pale stretch while it waited to start, a solid one in
 * its outcome's colour while it ran. A picture of what the timeline's text says, so hidden from assistive technology.
 */
function AttemptBars({ attempts, now }: { attempts: Attempt[]; now: number }) {
  const start = Math.min(...attempts.map((a) => at(a.queued_at ?? a.started_at)));
  const end = Math.max(...attempts.map((a) => (a.finished_at ? at(a.finished_at) : a.outcome === "running" ? now : at(a.started_at))));
  const span = Math.max(end - start, 1);
  const percent = (ms: number) => `${((ms - start) / span) * 100}%`;
  const width = (from: number, to: number) => `max(2px, ${((to - from) / span) * 100}%)`;
  return (
    <Stack gap={6} mb="md" aria-hidden data-testid="attempt-bars">
      {attempts.map((a, i) => {
        const started = at(a.started_at);
        const finished = a.finished_at ? at(a.finished_at) : a.outcome === "running" ? now : started;
        return (
          <Group key={i} gap="xs" wrap="nowrap">
            <Text size="xs" c="dimmed" w={28} ta="right">
              #{a.attempt}
            </Text>
            <Box pos="relative" h={14} style={{ flex: 1, background: "var(--mantine-color-gray-1)", borderRadius: 3 }}>
              {a.queued_at && (
                <Box
                  pos="absolute"
                  top={4}
                  h={6}
                  data-testid={`attempt-${a.attempt}-wait-bar`}
                  style={{ left: percent(at(a.queued_at)), width: width(at(a.queued_at), started), background: "var(--mantine-color-gray-4)" }}
                />
              )}
              <Box
                pos="absolute"
                top={0}
                h={14}
                data-testid={`attempt-${a.attempt}-run-bar`}
                style={{ left: percent(started), width: width(started, finished), background: cssColor(OUTCOME_COLORS[a.outcome]), borderRadius: 3 }}
              />
            </Box>
          </Group>
        );
      })}
      <Group justify="space-between" ml={36}>
        <Text size="xs" c="dimmed">
          <Time iso={new Date(start).toISOString()} />
        </Text>
        <Text size="xs" c="dimmed">
          {formatDuration(span)} in all
        </Text>
      </Group>
    </Stack>
  );
}

/**
 * Whether a line of entry i's attempt, written at `time`, belongs under entry i: entries share a number when an
 * interrupted attempt was taken over (its end unknown: its lines go with the take-over) or an attempt paused for a
 * sleep or a wait and resumed (each part has the lines written while it ran).
 */
function linePart(attempts: Attempt[], i: number, time: number): boolean {
  const number = attempts[i]!.attempt;
  const first = !attempts.slice(0, i).some((a) => a.attempt === number);
  const next = attempts.slice(i + 1).find((a) => a.attempt === number);
  if (next && !attempts[i]!.finished_at) return false;
  // A part has what was written from its start until the next part started (a pause's own note comes just after it).
  return (first || time >= at(attempts[i]!.started_at)) && (!next || time < at(next.started_at));
}

function Attempts({ attempts, logs, status }: { attempts: Attempt[]; logs: LogLine[]; status: string }) {
  // Lines of an attempt that never started (a job cancelled while it waited) are notes, not an attempt (issue 23 #12).
  const numbers = new Set(attempts.map((a) => a.attempt));
  const notes = logs.filter((line) => !numbers.has(line.attempt));
  const now = Date.now();
  if (!attempts.length)
    return (
      <Stack gap={4}>
        <Text c="dimmed">{status === "cancelled" ? "It was cancelled before an attempt started." : "No attempt has started yet."}</Text>
        {notes.map((line, i) => (
          <Text key={i} size="sm" data-testid="job-note">
            <Time iso={line.timestamp} /> · {line.message}
          </Text>
        ))}
      </Stack>
    );
  return (
    <>
      <AttemptBars attempts={attempts} now={now} />
      <Timeline active={attempts.length - 1} bulletSize={20} lineWidth={2}>
        {attempts.map((attempt, i) => {
          const lines = logs.filter((line) => line.attempt === attempt.attempt && linePart(attempts, i, at(line.timestamp)));
          const { outcome } = attempt;
          return (
            <Timeline.Item
              key={i}
              title={attemptTitle(attempt)}
              color={OUTCOME_COLORS[outcome]}
              data-testid={`attempt-${attempt.attempt}`}
              data-outcome={outcome}
            >
              <Text size="xs" c="dimmed" data-testid={`attempt-${attempt.attempt}-queued`}>
                {attempt.resumed && attempt.queued_at ? (
                  <>
                    Resumed <Time iso={attempt.queued_at} /> · waited {formatDuration(attempt.wait_ms ?? 0)} for a worker
                  </>
                ) : attempt.queued_at ? (
                  <>
                    Due <Time iso={attempt.queued_at} /> · waited {formatDuration(attempt.wait_ms ?? 0)}
                  </>
                ) : (
                  "Took over from an interrupted attempt"
                )}
              </Text>
              <Text size="xs" c="dimmed" data-testid={`attempt-${attempt.attempt}-timing`}>
                Started <Time iso={attempt.started_at} />
                {attempt.finished_at && outcome === "suspended" ? (
                  <>
                    {" "}
                    · paused <Time iso={attempt.finished_at} /> after {formatDuration(attempt.duration_ms ?? 0)}, its worker slot freed meanwhile
                  </>
                ) : attempt.finished_at ? (
                  <>
                    {" "}
                    · finished <Time iso={attempt.finished_at} /> · took {formatDuration(attempt.duration_ms ?? 0)}
                  </>
                ) : outcome === "running" ? (
                  <> · running for {formatDuration(now - at(attempt.started_at))}</>
                ) : (
                  " · its worker stopped without an outcome"
                )}
              </Text>
              {attempt.error && (
                <Text size="sm" c="red.9" mt={2} style={{ wordBreak: "break-word", whiteSpace: "pre-wrap" }} data-testid={`attempt-${attempt.attempt}-error`}>
                  {attempt.error}
                </Text>
              )}
              <Stack gap={4} mt={4}>
                {/* The message takes the whole line when the level and time leave it less than 14rem (at 375 px its
                    column was 130 px: issue 48 #10). */}
                {lines.map((line, i) => (
                  <Group key={i} gap="xs" wrap="wrap" align="flex-start" data-testid="log-line">
                    <Badge size="xs" variant="dot" color={LEVEL_COLORS[line.level] ?? "gray"} miw={56}>
                      {line.level}
                    </Badge>
                    <Text size="xs" c="dimmed" miw={70}>
                      <time dateTime={line.timestamp}>{new Date(line.timestamp).toLocaleTimeString()}</time>
                    </Text>
                    <Text size="sm" style={{ wordBreak: "break-word", whiteSpace: "pre-wrap", flex: "1 1 14rem", minWidth: 0 }} data-testid="log-message">
                      {line.message}
                    </Text>
                  </Group>
                ))}
              </Stack>
            </Timeline.Item>
          );
        })}
      </Timeline>
    </>
  );
}

function JobActions({ job }: { job: Job }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  // A replay runs the job again — its webhook is sent again, its e-mail too: asked first (issue 48 #5).
  const [replaying, setReplaying] = useState(false);
  const final = FINAL_STATUSES.includes(job.status);
  // Due later (its run_at, or a retry's wait): it can be run now (issue 38).
  const delayed = job.status === "pending" && (job.waiting_for === "run_at" || job.waiting_for === "retry");
  const refresh = () => [keys.job.detail(job.id), keys.jobs.all, keys.retries.all];

  const cancel = useAction({
    run: () => call(api.POST("/jobs/{id}/cancel", { params: { path: { id: job.id } } })),
    done: (updated) => (updated.status === "cancelled" ? "Job cancelled." : "Cancellation requested; the worker stops it."),
    failed: "Could not cancel",
    refresh,
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.job.detail(job.id), updated);
      setConfirming(false);
    },
  });
  const replay = useAction({
    run: () => call(api.POST("/jobs/{id}/replay", { params: { path: { id: job.id } } })),
    done: (created) => `Replayed as job ${shortId(created.id)}.`,
    failed: "Could not replay",
    refresh,
    onSuccess: (created) => {
      setReplaying(false);
      void navigate({ to: "/jobs/$id", params: { id: created.id } });
    },
  });
  const runNow = useAction({
    run: () => call(api.POST("/jobs/{id}/run-now", { params: { path: { id: job.id } } })),
    done: () => (job.waiting_for === "retry" ? "Retrying now." : "Due now: it starts as soon as a worker is free."),
    failed: "Could not run it now",
    refresh,
    onSuccess: (updated) => queryClient.setQueryData(keys.job.detail(job.id), updated),
  });
  const busy = cancel.isPending || replay.isPending || runNow.isPending;

  return (
    <Group gap="xs">
      {delayed && (
        <Button variant="default" onClick={() => runNow.mutate(undefined)} loading={runNow.isPending}>
          {job.waiting_for === "retry" ? "Retry now" : "Run now"}
        </Button>
      )}
      {!final && (
        <Button color="red.9" variant="outline" onClick={() => setConfirming(true)} disabled={Boolean(job.cancel_requested_at)}>
          {job.cancel_requested_at ? "Cancelling…" : "Cancel job"}
        </Button>
      )}
      {final && (
        <>
          <Button variant="default" onClick={() => setEditing(true)} disabled={busy}>
            Replay with changes…
          </Button>
          <Button onClick={() => setReplaying(true)} loading={replay.isPending}>
            Replay…
          </Button>
        </>
      )}
      <ReplayDialog jobId={editing ? job.id : null} onClose={() => setEditing(false)} />
      <Confirm
        opened={replaying}
        title="Replay this job?"
        confirmLabel="Replay"
        color="blue"
        loading={replay.isPending}
        onConfirm={() => replay.mutate(undefined)}
        onClose={() => !replay.isPending && setReplaying(false)}
      >
        <Text size="sm" data-testid="replay-warning">
          A new {job.type} job runs with the same payload: whatever it does happens again (a webhook is sent, a message goes out).
          {job.replayed_as.length > 0 && (
            <>
              {" "}
              <strong>It was already replayed {job.replayed_as.length === 1 ? "once" : `${job.replayed_as.length} times`}.</strong>
            </>
          )}
        </Text>
      </Confirm>
      <Confirm
        opened={confirming}
        title="Cancel this job?"
        confirmLabel="Cancel job"
        loading={cancel.isPending}
        onConfirm={() => cancel.mutate(undefined)}
        onClose={() => setConfirming(false)}
      >
        {job.status === "processing" ? "The worker running it is told to stop; it ends cancelled unless it finishes first." : "It will never run."}
      </Confirm>
    </Group>
  );
}
