// Workers (issue 38; Sidekiq's Busy tab, Oban Web's nodes): the deployment's worker processes from the worker registry
// in Postgres (GET /workers) — each one's host and pid, the types it serves, its concurrency, a bar of its busy slots
// (this organization's jobs and other work), the jobs of this organization it runs, linking to their pages, and its
// last heartbeat; a worker silent for three heartbeats is shown gone. Read again every few seconds. On a shared
// deployment (docs/reference/time.md#alerts) the API answers the deployment's workers only as capacity per job type this organization
// uses, and the page shows that instead: processes and slots per type, and this organization's jobs running there.
import { Badge, Group, Paper, Progress, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import type { ResponseBody } from "@conveyor/client";
import { useWorkers } from "../data/workers";
import { shortId, Time } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { Empty, ErrorState, Loading } from "../ui/states";
import { CapacityByType, type WorkerRow } from "./workers-by-type";

type WorkerItem = ResponseBody<"/workers", "get">[number];
type CapacityRow = Extract<WorkerItem, { kind: "capacity" }>;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function WorkersPage() {
  const query = useWorkers();
  const capacity = query.data?.filter((w): w is CapacityRow => w.kind === "capacity") ?? [];
  const workers = { ...query, data: query.data?.filter((w): w is WorkerRow => w.kind !== "capacity") };
  const running = workers.data?.filter((w) => w.state === "running") ?? [];
  const slots = running.reduce((n, w) => n + w.slots, 0);
  const busy = running.reduce((n, w) => n + w.busy_slots, 0);

  return (
    <Stack>
      <Title order={1} size="h2">
        Workers
      </Title>
      {capacity.length === 0 && (
        <Text c="dimmed" size="sm">
          The worker processes of this deployment, as they last reported themselves (every few seconds). Only your organization&apos;s jobs are listed; other
          work shows as busy slots.
        </Text>
      )}
      {query.isPending ? (
        <Loading label="Loading workers…" />
      ) : query.isError ? (
        <ErrorState error={query.error} retry={() => void query.refetch()} />
      ) : capacity.length > 0 ? (
        <>
          <CapacityList rows={capacity} />
          {/* The organization's own workers (docs/reference/lifecycle.md#your-own-workers) serve its own types: shown in full beside the shared capacity. */}
          {workers.data && workers.data.length > 0 && (
            <>
              <Title order={2} size="h4" mt="sm">
                Your own workers
              </Title>
              <WorkerCards workers={workers.data} label="Your own workers" />
            </>
          )}
        </>
      ) : !workers.data || workers.data.length === 0 ? (
        <Empty title="No worker is running">Jobs stay pending until a worker process starts; each one shows here as soon as it does.</Empty>
      ) : (
        <>
          <Text size="sm" data-testid="workers-summary" aria-live="polite">
            {plural(running.length, "worker")} running · {busy} of {plural(slots, "slot")} busy
            {workers.data.length > running.length && ` · ${workers.data.length - running.length} gone`}
          </Text>
          <CapacityByType workers={running} />
          <WorkerCards workers={workers.data} label="Worker processes" />
        </>
      )}
    </Stack>
  );
}

/** Worker processes as cards, two columns wide on a large screen. */
function WorkerCards({ workers, label }: { workers: WorkerRow[]; label: string }) {
  return (
    <SimpleGrid component="ul" cols={{ base: 1, md: 2 }} spacing="sm" p={0} m={0} aria-label={label} style={{ listStyle: "none" }}>
      {workers.map((worker) => (
        <WorkerCard key={worker.id} worker={worker} />
      ))}
    </SimpleGrid>
  );
}

function WorkerCard({ worker }: { worker: WorkerRow }) {
  const gone = worker.state === "gone";
  const yours = worker.busy_slots - worker.other_busy_slots;
  const percent = (n: number) => (worker.slots > 0 ? (100 * n) / worker.slots : 0);
  // One of the organization's own workers (docs/reference/lifecycle.md#your-own-workers): named as it named itself, running its own SDK.
  const own = worker.kind === "protocol";
  const name = own ? worker.host : `${worker.host} · pid ${worker.pid}`;
  return (
    <Paper component="li" withBorder p="sm" data-worker-id={worker.id} data-state={worker.state} aria-label={name} style={{ minWidth: 0 }}>
      <Stack gap={8}>
        <Group justify="space-between" align="flex-start" gap="xs" wrap="nowrap">
          <Stack gap={0} miw={0}>
            <Text fw={600} size="sm" style={{ overflowWrap: "anywhere" }} data-testid="worker-name">
              {worker.host} {!own && <span style={{ whiteSpace: "nowrap" }}>· pid {worker.pid}</span>}
            </Text>
            <Text size="xs" c="dimmed">
              {own ? `Your own worker (${worker.version})` : `Conveyor ${worker.version} on Node.js ${worker.node_version}`} · started{" "}
              <Time iso={worker.started_at} />
            </Text>
          </Stack>
          <Badge color={gone ? "red" : "green"} variant="dot" miw="max-content" style={{ flexShrink: 0 }}>
            {gone ? "Gone" : "Running"}
          </Badge>
        </Group>
        {gone && (
          <Text size="sm" c="red.9" data-testid="gone-note">
            No heartbeat for {plural(3, "interval")}: it was killed or lost its host. Its jobs go to the other workers; it leaves this list 15 minutes after.
          </Text>
        )}
        <Stack gap={4}>
          <Text size="sm" data-testid="slots">
            {gone && "When last heard: "}
            {worker.busy_slots} of {plural(worker.slots, "slot")} busy{" "}
            <Text span c="dimmed" size="xs">
              ({worker.concurrency} per type{yours > 0 ? ` · ${yours} yours` : ""}
              {worker.other_busy_slots > 0 ? ` · ${worker.other_busy_slots} other work` : ""})
            </Text>
          </Text>
          <Progress.Root size="lg" aria-hidden>
            <Progress.Section value={percent(yours)} color="blue.8" />
            <Progress.Section value={percent(worker.other_busy_slots)} color="gray.6" />
          </Progress.Root>
        </Stack>
        <Group gap={4} aria-label="Job types it serves" role="list">
          {worker.types.map((type) => (
            <Badge key={type} role="listitem" variant="default" tt="none" fw={500}>
              {type}
            </Badge>
          ))}
        </Group>
        <RunningJobs jobs={worker.jobs} label={`Your jobs on ${name}`} />
        <Text size="xs" c="dimmed" data-testid="heartbeat">
          Last heartbeat <Time iso={worker.heartbeat_at} />
        </Text>
      </Stack>
    </Paper>
  );
}

/** The deployment's shared workers as this organization may see them: capacity per job type it uses. */
function CapacityList({ rows }: { rows: CapacityRow[] }) {
  return (
    <>
      <Text size="sm" c="dimmed">
        This deployment&apos;s workers are shared: you see their capacity for the job types your organization uses (as they last reported themselves, every few
        seconds), not the machines.
      </Text>
      <SimpleGrid component="ul" cols={{ base: 1, md: 2 }} spacing="sm" p={0} m={0} aria-label="Capacity by job type" style={{ listStyle: "none" }}>
        {rows.map((row) => (
          <Paper component="li" withBorder p="sm" key={row.type} data-capacity-type={row.type} aria-label={row.type} style={{ minWidth: 0 }}>
            <Stack gap={6}>
              <Group justify="space-between" gap="xs" wrap="nowrap">
                <Text fw={600} size="sm" style={{ overflowWrap: "anywhere" }}>
                  {row.type}
                </Text>
                <Badge color={row.workers > 0 ? "green" : "red"} variant="dot" miw="max-content" style={{ flexShrink: 0 }}>
                  {row.workers > 0 ? "Served" : "No worker"}
                </Badge>
              </Group>
              <Text size="sm" data-testid="capacity">
                {row.workers > 0
                  ? `${plural(row.workers, "worker")} · ${plural(row.slots, "slot")} · ${row.jobs.length} of your jobs running`
                  : "No worker serves this type: its jobs wait until one starts."}
              </Text>
              <RunningJobs jobs={row.jobs} label={`Your ${row.type} jobs running`} />
            </Stack>
          </Paper>
        ))}
      </SimpleGrid>
    </>
  );
}

/** This organization's running jobs, each linking to its page: on a worker's card and on a type's capacity card. */
function RunningJobs({ jobs, label }: { jobs: WorkerRow["jobs"]; label: string }) {
  if (jobs.length === 0) return null;
  return (
    <Stack gap={2} component="ul" p={0} m={0} aria-label={label} style={{ listStyle: "none" }}>
      {jobs.map((job) => (
        <Text component="li" size="sm" key={job.id} data-job-id={job.id}>
          <RouterAnchor to="/jobs/$id" params={{ id: job.id }} size="sm">
            {job.type} {shortId(job.id)}
          </RouterAnchor>{" "}
          <Text span size="xs" c="dimmed">
            started <Time iso={job.started_at} />
          </Text>
        </Text>
      ))}
    </Stack>
  );
}
