// Queues and rate limits (docs/reference/flow-control.md#flow-control): each job type's queue for this organization — due, delayed, running, held by
// limits, the live start rate and the p95 wait from due to start — read again every few seconds; owners and admins
// pause and resume a queue, set its cap and rate limit, and keep the organization's named rate limits. Members see
// the same figures without the controls (the API refuses them the changes as well).
import { Badge, Box, Button, Flex, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useState } from "react";
import { useAction } from "../data/actions";
import { patchQueue, QUEUES_REFRESH_MS, queuesRefresh, useQueueActivity, useQueues, useRateLimits, type Queue, type QueueActivity } from "../data/queues";
import { canManageTeam, useSession } from "../session";
import { formatTime } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { ActionsHeader, ListTable, QueryList } from "../ui/list";
import { QueueChart } from "./queue-charts";
import { QueueLimitsForm } from "./queue-limits-form";
import { RateLimits } from "./rate-limits";

export type { Queue, RateLimit } from "../data/queues";

/** 850 → "850 ms", 12 400 → "12.4 s", 190 000 → "3 min 10 s". */
export function formatWait(ms: number | null): string {
  if (ms === null) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A queue row's chart, when the activity has a series of its type. */
function RowChart({ type, activity }: { type: string; activity: QueueActivity }) {
  const series = activity.queues.find((q) => q.type === type);
  return series ? <QueueChart series={series} minutes={activity.minutes} coveredFrom={activity.covered_from} /> : null;
}

export function QueuesPage() {
  const session = useSession();
  const manager = canManageTeam(session.role);
  const queues = useQueues();
  const limits = useRateLimits();
  // Issue 38: each row's chart of the last hour (starts and p95 wait per minute).
  const activity = useQueueActivity();
  const [editing, setEditing] = useState<Queue | null>(null);
  const pausing = useAction({
    run: ({ queue, paused }: { queue: Queue; paused: boolean }) => patchQueue({ type: queue.type, body: { paused } }),
    done: (_, { queue, paused }) => (paused ? `${queue.type} paused: none of its jobs starts until it is resumed.` : `${queue.type} resumed.`),
    failed: ({ queue, paused }) => `Could not ${paused ? "pause" : "resume"} ${queue.type}`,
    refresh: queuesRefresh,
  });
  const busyType = pausing.isPending ? pausing.variables?.queue.type : undefined;
  const setPaused = (queue: Queue, paused: boolean) => pausing.mutate({ queue, paused });

  return (
    <Stack>
      <Title order={1} size="h2">
        Queues
      </Title>
      <Text c="dimmed" size="sm">
        Your organization&apos;s jobs of each type, read again every {QUEUES_REFRESH_MS / 1000} seconds.{" "}
        {manager
          ? "Pause a type to hold its jobs (running ones finish); limits hold them back without failing them."
          : "Owners and admins can pause queues and change their limits."}
      </Text>
      <QueryList
        query={queues}
        loading="Loading queues…"
        empty={{ title: "No job types yet", children: "Types appear here once they are built in or a worker registers them." }}
      >
        {(rows) => (
          <ListTable
            label="Queues"
            minWidth={900}
            verticalSpacing="xs"
            head={
              <>
                <Table.Th>Type</Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Due
                </Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Delayed
                </Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Running
                </Table.Th>
                <Table.Th ta="right" visibleFrom="sm" title="Due, but held back by the queue's pause, its cap or a rate limit">
                  Held back
                </Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Starts, last minute
                </Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  p95 wait, 15 min
                </Table.Th>
                <Table.Th visibleFrom="sm">Limits</Table.Th>
                {manager && <ActionsHeader visibleFrom="sm" />}
              </>
            }
          >
            {rows.map((queue) => (
              <Table.Tr key={queue.type} data-queue={queue.type} data-paused={queue.paused}>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <RouterAnchor to="/jobs" search={{ type: queue.type, status: "pending" }} size="sm" ff="monospace" title={`Pending ${queue.type} jobs`}>
                      {queue.type}
                    </RouterAnchor>
                    {queue.paused && (
                      <Badge color="orange" variant="dot" size="sm" miw="max-content">
                        Paused
                      </Badge>
                    )}
                  </Group>
                  {/* A phone shows the other figures under the type instead of in columns of their own. */}
                  <Box hiddenFrom="sm">
                    <Text size="xs" c="dimmed">
                      <CountLink queue={queue} figure="due" /> due · <CountLink queue={queue} figure="delayed" /> delayed ·{" "}
                      <CountLink queue={queue} figure="running" /> running · <CountLink queue={queue} figure="held" /> {heldWords(queue)} ·{" "}
                      {queue.started_last_minute}/min · p95 {formatWait(queue.p95_wait_ms)}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {limitsText(queue)}
                    </Text>
                    {/* On a phone the buttons sit under the figures, never clipped by a column off screen (issue 38 #8). */}
                    {manager && (
                      <Box mt={6}>
                        <QueueButtons queue={queue} busy={busyType === queue.type} onPause={setPaused} onLimits={setEditing} />
                      </Box>
                    )}
                  </Box>
                  {queue.oldest_due_at && (
                    <Text size="xs" c="dimmed" visibleFrom="sm">
                      Oldest due {formatTime(queue.oldest_due_at)}
                    </Text>
                  )}
                  {activity.data && <RowChart type={queue.type} activity={activity.data} />}
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm" data-figure="due">
                  <CountLink queue={queue} figure="due" />
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm" data-figure="delayed">
                  <CountLink queue={queue} figure="delayed" />
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm" data-figure="running">
                  <CountLink queue={queue} figure="running" />
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm" data-figure="held">
                  <CountLink queue={queue} figure="held" />
                  {queue.paused && queue.waiting_on_limits > 0 && (
                    <Text size="xs" c="dimmed">
                      by the pause
                    </Text>
                  )}
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm" data-figure="starts">
                  {queue.started_last_minute}
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm" data-figure="p95">
                  {formatWait(queue.p95_wait_ms)}
                </Table.Td>
                <Table.Td visibleFrom="sm" miw={120}>
                  <Text size="sm">{limitsText(queue)}</Text>
                </Table.Td>
                {manager && (
                  <Table.Td visibleFrom="sm">
                    <QueueButtons queue={queue} busy={busyType === queue.type} onPause={setPaused} onLimits={setEditing} />
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      <RateLimits manager={manager} limits={limits} />
      {manager && <QueueLimitsForm queue={editing} rateLimits={limits.data ?? []} onClose={() => setEditing(null)} />}
    </Stack>
  );
}

/**
 * What the held-back figure counts, in words: due jobs a paused queue holds are held by its pause, not by limits
 * (issue 38 #8; the API counts them together as `waiting_on_limits`).
 */
function heldWords(queue: Queue): string {
  return queue.paused ? "held by the pause" : "held by limits";
}

type Figure = "due" | "delayed" | "running" | "held";

/** A queue's figure as a link to the jobs it counts (the list filtered by type and status or due). */
function CountLink({ queue, figure }: { queue: Queue; figure: Figure }) {
  const value = figure === "held" ? queue.waiting_on_limits : queue[figure];
  const search =
    figure === "running"
      ? { type: queue.type, status: "processing" }
      : figure === "delayed"
        ? { type: queue.type, due: "later" as const }
        : { type: queue.type, due: "now" as const };
  const words = figure === "held" ? heldWords(queue) : figure;
  return (
    <RouterAnchor to="/jobs" search={search} size="sm" aria-label={`${value} ${words}: ${queue.type} jobs`} data-count={figure}>
      {value}
    </RouterAnchor>
  );
}

function QueueButtons(props: { queue: Queue; busy: boolean; onPause(queue: Queue, paused: boolean): void; onLimits(queue: Queue): void }) {
  const { queue } = props;
  return (
    <Flex gap={4} direction="row" wrap="wrap">
      <Button
        size="xs"
        variant={queue.paused ? "filled" : "default"}
        // One width for both words: the buttons beside it stay where they were.
        miw={80}
        loading={props.busy}
        onClick={() => props.onPause(queue, !queue.paused)}
        aria-label={`${queue.paused ? "Resume" : "Pause"} ${queue.type}`}
      >
        {queue.paused ? "Resume" : "Pause"}
      </Button>
      <Button size="xs" variant="default" onClick={() => props.onLimits(queue)} aria-label={`Limits of ${queue.type}`}>
        Limits
      </Button>
    </Flex>
  );
}

function limitsText(queue: Queue): string {
  const parts = [
    queue.concurrency_limit === null ? null : `at most ${queue.concurrency_limit} running`,
    queue.rate_limit === null ? null : `rate limit ${queue.rate_limit}`,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : "No limits";
}
