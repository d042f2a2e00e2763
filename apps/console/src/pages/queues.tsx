// Queues and rate limits (docs/reference/flow-control.md#flow-control): each job type's queue for this organization — due, delayed, running, held by
// limits, the live start rate and the p95 wait from due to start — read again every few seconds; owners and admins
// pause and resume a queue, set its cap and rate limit, and keep the organization's named rate limits. Members see
// the same figures without the controls (the API refuses them the changes as well).
import { Badge, Box, Button, Flex, Group, Modal, NumberInput, Select, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useQuery, type UseQueryResult } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { QUEUE_CONCURRENCY_LIMIT_MAX, RATE_LIMIT_MAX, RATE_LIMIT_NAME_PATTERN, RATE_LIMIT_PERIODS, type ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { useAction } from "../data/actions";
import { keys } from "../data/keys";
import { canManageTeam, useSession } from "../session";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { formErrors, problems, type FormErrors } from "../ui/form";
import { formatTime } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { FormButtons } from "../ui/form-parts";
import { ActionsHeader, EditDeleteButtons, ListTable, QueryList } from "../ui/list";
import { Heading } from "../ui/page";
import { QueueChart, useQueueActivity } from "./queue-charts";

export type Queue = ResponseBody<"/queues", "get">[number];
export type RateLimit = ResponseBody<"/rate-limits", "get">[number];

/** How often the figures are read again while the page is open. */
const REFRESH_MS = 5_000;
const NAME_PATTERN = RATE_LIMIT_NAME_PATTERN;
const LIMIT_MAX = RATE_LIMIT_MAX;
const CAP_MAX = QUEUE_CONCURRENCY_LIMIT_MAX;
const PERIODS = RATE_LIMIT_PERIODS;
type Period = (typeof PERIODS)[number];

const queuesQuery = { queryKey: keys.queues.all, queryFn: () => call(api.GET("/queues")), refetchInterval: REFRESH_MS } as const;
const rateLimitsQuery = { queryKey: keys.rateLimits.all, queryFn: () => call(api.GET("/rate-limits")), refetchInterval: REFRESH_MS } as const;

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
function RowChart({ type, activity }: { type: string; activity: NonNullable<ReturnType<typeof useQueueActivity>["data"]> }) {
  const series = activity.queues.find((q) => q.type === type);
  return series ? <QueueChart series={series} minutes={activity.minutes} coveredFrom={activity.covered_from} /> : null;
}

const per = (period: string) => (period === "second" ? "a second" : period === "minute" ? "a minute" : "an hour");

export function QueuesPage() {
  const session = useSession();
  const manager = canManageTeam(session.role);
  const queues = useQuery(queuesQuery);
  const limits = useQuery(rateLimitsQuery);
  // Issue 38: each row's chart of the last hour (starts and p95 wait per minute).
  const activity = useQueueActivity();
  const [editing, setEditing] = useState<Queue | null>(null);
  const pausing = useAction({
    run: ({ queue, paused }: { queue: Queue; paused: boolean }) =>
      call(api.PATCH("/queues/{type}", { params: { path: { type: queue.type } }, body: { paused } })),
    done: (_, { queue, paused }) => (paused ? `${queue.type} paused: none of its jobs starts until it is resumed.` : `${queue.type} resumed.`),
    failed: ({ queue, paused }) => `Could not ${paused ? "pause" : "resume"} ${queue.type}`,
    refresh: () => [keys.queues.all],
  });
  const busyType = pausing.isPending ? pausing.variables?.queue.type : undefined;
  const setPaused = (queue: Queue, paused: boolean) => pausing.mutate({ queue, paused });

  return (
    <Stack>
      <Title order={1} size="h2">
        Queues
      </Title>
      <Text c="dimmed" size="sm">
        Your organization&apos;s jobs of each type, read again every {REFRESH_MS / 1000} seconds.{" "}
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

/** The queue's cap (empty: none) and rate limit (one of the organization's, or none). */
function QueueLimitsForm({ queue, rateLimits, onClose }: { queue: Queue | null; rateLimits: RateLimit[]; onClose(): void }) {
  const [cap, setCap] = useState<string | number>("");
  const [rateLimit, setRateLimit] = useState<string | null>(null);
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const saving = useAction({
    run: ({ type, body }: { type: string; body: { concurrency_limit: number | null; rate_limit: string | null } }) =>
      call(api.PATCH("/queues/{type}", { params: { path: { type } }, body })),
    done: (_, { type }) => `Limits of ${type} saved.`,
    failed: "Could not save the limits",
    shownAt: (error) => setErrors(formErrors(error, ["concurrency_limit", "rate_limit"])),
    refresh: () => [keys.queues.all],
    onSuccess: () => onClose(),
  });
  useEffect(() => {
    setCap(queue?.concurrency_limit ?? "");
    setRateLimit(queue?.rate_limit ?? null);
    setErrors({ fields: {} });
  }, [queue]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!queue) return;
    const capValue = cap === "" ? null : Number(cap);
    const found = problems({
      concurrency_limit:
        capValue !== null && (!Number.isInteger(capValue) || capValue < 1 || capValue > CAP_MAX)
          ? `must be a whole number from 1 to ${CAP_MAX}, or empty`
          : undefined,
    });
    if (Object.keys(found).length) return setErrors({ fields: found });
    saving.mutate({ type: queue.type, body: { concurrency_limit: capValue, rate_limit: rateLimit } });
  };

  return (
    <Modal opened={queue !== null} onClose={onClose} title={queue ? `Limits of ${queue.type}` : "Limits"} centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <NumberInput
            label="Most running at once"
            description="Your jobs of this type running at the same time. Empty: no cap of your own."
            value={cap}
            onChange={setCap}
            min={1}
            max={CAP_MAX}
            allowDecimal={false}
            allowNegative={false}
            clampBehavior="none"
            error={errors.fields.concurrency_limit}
            data-autofocus
          />
          <Select
            label="Rate limit"
            description={rateLimits.length ? "Every job of this type starts under it." : "Define a rate limit below first."}
            data={[
              { value: "", label: "None" },
              ...rateLimits.map((limit) => ({ value: limit.name, label: `${limit.name} (${limit.limit} ${per(limit.period)})` })),
            ]}
            value={rateLimit ?? ""}
            onChange={(value) => setRateLimit(value ? value : null)}
            allowDeselect={false}
            error={errors.fields.rate_limit}
          />
          {errors.form && (
            <Text c="var(--mantine-color-error)" size="sm" role="alert">
              {errors.form}
            </Text>
          )}
          <FormButtons onCancel={onClose} busy={saving.isPending}>
            Save limits
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}

function RateLimits({ manager, limits }: { manager: boolean; limits: UseQueryResult<RateLimit[]> }) {
  const [editing, setEditing] = useState<RateLimit | "new" | null>(null);
  const deleting = useConfirmedAction<RateLimit>({
    queryKey: keys.rateLimits.all,
    failed: "Could not delete the rate limit",
    run: async (limit) => {
      await call(api.DELETE("/rate-limits/{name}", { params: { path: { name: limit.name } } }));
      return `Rate limit “${limit.name}” deleted.`;
    },
  });
  return (
    <Stack component="section" aria-labelledby="rate-limits-title" mt="md">
      <Heading section id="rate-limits-title" action={manager && <Button onClick={() => setEditing("new")}>New rate limit</Button>}>
        Rate limits
      </Heading>
      <Text c="dimmed" size="sm">
        A job that names a rate limit in <code>rate_limit</code> (or whose queue names one) starts at most that often, across every worker.
      </Text>
      <QueryList
        query={limits}
        loading="Loading rate limits…"
        empty={{
          title: "No rate limits yet",
          children: manager ? "Create one for each provider account your jobs share." : "Owners and admins can create them.",
        }}
      >
        {(rows) => (
          <ListTable
            label="Rate limits"
            head={
              <>
                <Table.Th>Name</Table.Th>
                <Table.Th visibleFrom="sm">Limit</Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Used now
                </Table.Th>
                {manager && <ActionsHeader visibleFrom="sm" />}
              </>
            }
          >
            {rows.map((limit) => (
              <Table.Tr key={limit.name} data-rate-limit={limit.name}>
                <Table.Td>
                  <Text ff="monospace" size="sm" style={{ overflowWrap: "anywhere" }}>
                    {limit.name}
                  </Text>
                  <Text size="xs" c="dimmed" hiddenFrom="sm">
                    {limit.limit} {per(limit.period)} · {limit.used} used now
                  </Text>
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  {limit.limit} {per(limit.period)}
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm">
                  {limit.used}
                </Table.Td>
                {manager && (
                  <Table.Td>
                    <EditDeleteButtons justify="flex-end" name={limit.name} onEdit={() => setEditing(limit)} onDelete={() => deleting.ask(limit)} />
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      {manager && <RateLimitForm limit={editing} onClose={() => setEditing(null)} />}
      <ConfirmAction action={deleting} title="Delete this rate limit?" confirmLabel="Delete">
        Jobs and queues naming “{deleting.target?.name}” start without it from then on.
      </ConfirmAction>
    </Stack>
  );
}

function RateLimitForm({ limit, onClose }: { limit: RateLimit | "new" | null; onClose(): void }) {
  const existing = limit && limit !== "new" ? limit : null;
  const [name, setName] = useState("");
  const [count, setCount] = useState<string | number>(10);
  const [period, setPeriod] = useState<Period>("second");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const saving = useAction({
    run: ({ name, body }: { name: string; body: { limit: number; period: Period } }) =>
      call(api.PUT("/rate-limits/{name}", { params: { path: { name } }, body })),
    done: (_, { name, body }) => `Rate limit “${name}” saved: ${body.limit} ${per(body.period)}.`,
    failed: "Could not save the rate limit",
    shownAt: (error) => setErrors(formErrors(error, ["name", "limit", "period"])),
    refresh: () => [keys.rateLimits.all],
    onSuccess: () => onClose(),
  });
  useEffect(() => {
    setName(existing?.name ?? "");
    setCount(existing?.limit ?? 10);
    setPeriod((existing?.period as Period | undefined) ?? "second");
    setErrors({ fields: {} });
  }, [limit]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    const value = Number(count);
    const found = problems({
      name: !trimmed ? "is required" : NAME_PATTERN.test(trimmed) ? undefined : "must be 1 to 100 of a-z, 0-9, _ . : -",
      limit: count === "" || !Number.isInteger(value) || value < 1 || value > LIMIT_MAX ? `must be a whole number from 1 to ${LIMIT_MAX}` : undefined,
    });
    if (Object.keys(found).length) return setErrors({ fields: found });
    saving.mutate({ name: trimmed, body: { limit: value, period } });
  };

  return (
    <Modal opened={limit !== null} onClose={onClose} title={existing ? `Edit ${existing.name}` : "New rate limit"} centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput
            label="Name"
            description="What jobs name in rate_limit, e.g. sms-provider."
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            readOnly={existing !== null}
            error={errors.fields.name}
            required
            data-autofocus={existing ? undefined : true}
          />
          <Group grow align="flex-start">
            <NumberInput
              label="Starts"
              value={count}
              onChange={setCount}
              min={1}
              max={LIMIT_MAX}
              allowDecimal={false}
              allowNegative={false}
              clampBehavior="none"
              error={errors.fields.limit}
              required
              data-autofocus={existing ? true : undefined}
            />
            <Select
              label="Per"
              data={PERIODS.map((p) => ({ value: p, label: p }))}
              value={period}
              onChange={(value) => value && setPeriod(value as Period)}
              allowDeselect={false}
              error={errors.fields.period}
              required
            />
          </Group>
          {errors.form && (
            <Text c="var(--mantine-color-error)" size="sm" role="alert">
              {errors.form}
            </Text>
          )}
          <FormButtons onCancel={onClose} busy={saving.isPending}>
            Save rate limit
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}
