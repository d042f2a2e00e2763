// A job's attempts (GET /jobs/{id}/attempts) on one time axis and as a timeline, each with the log lines written
// while it ran; lines of no attempt (a job cancelled before it started) are notes.
import { Badge, Box, Group, Stack, Text, Timeline } from "@mantine/core";
import type { Attempt, LogLine } from "../data/job-detail";
import { formatDuration, Time } from "../ui/format";

const LEVEL_COLORS: Record<string, string> = { info: "gray", warn: "orange", error: "red" };

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

export function Attempts({ attempts, logs, status }: { attempts: Attempt[]; logs: LogLine[]; status: string }) {
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
