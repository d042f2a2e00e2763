// The Usage page (docs/reference/tenants.md#usage-quotas-and-backpressure): what the organization used per UTC day and by job type over a chosen range (GET /usage),
// as charts with their figures in tables, and the quotas in force with how close each is (GET /quotas). Owners and
// admins only, like the API; members are told so. The overview's QuotaNotice (below) says when new jobs are refused.
import "@mantine/charts/styles.css";
import { BarChart } from "@mantine/charts";
import { Alert, Anchor, Group, Paper, Progress, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useState } from "react";
import type { ResponseBody } from "@conveyor/client";
import { useQuotas, useUsage } from "../data/usage";
import { canManageTeam, useSession } from "../session";
import { RouterAnchor } from "../ui/link";
import { ErrorState, Empty, Loading } from "../ui/states";
import { Heading, OwnersAndAdminsOnly } from "../ui/page";

type UsageRow = ResponseBody<"/usage", "get">[number];
type Quota = ResponseBody<"/quotas", "get">["quotas"][number];

const RANGES = { "7": "7 days", "30": "30 days", "90": "90 days", "400": "400 days" } as const;
type Range = keyof typeof RANGES;

const QUOTA_LABELS: Record<Quota["name"], string> = {
  jobs_per_day: "Jobs created today (UTC)",
  jobs_per_month: "Jobs created this month (UTC)",
  pending_max: "Pending jobs held",
  payload_bytes_max: "Payload bytes stored",
};

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The range's first and last day, ending today (UTC). */
function rangeOf(days: number): { from: string; to: string } {
  const today = new Date();
  return { from: isoDay(new Date(today.getTime() - (days - 1) * 86_400_000)), to: isoDay(today) };
}

export function UsagePage() {
  const session = useSession();
  if (!canManageTeam(session.role)) {
    return (
      <OwnersAndAdminsOnly title="Usage">
        You are a member of {session.org.name}. Owners and admins can see what the organization used and its quotas here.
      </OwnersAndAdminsOnly>
    );
  }
  return <Usage />;
}

function Usage() {
  const [range, setRange] = useState<Range>("30");
  const { from, to } = rangeOf(Number(range));
  const { byDay, byType } = useUsage(from, to);
  const csv = `/usage?from=${from}&to=${to}&group_by=`;

  return (
    <Stack>
      <Heading
        align="end"
        action={
          <SegmentedControl
            aria-label="Range"
            value={range}
            onChange={(value) => setRange(value as Range)}
            data={Object.entries(RANGES).map(([value, label]) => ({ value, label }))}
          />
        }
      >
        Usage
      </Heading>
      <Quotas />
      <Paper withBorder p="md">
        <Group justify="space-between">
          <Title order={2} size="h4">
            By day
          </Title>
          <Text size="sm">
            {from} to {to} (UTC) · CSV: <CsvLink href={`${csv}day`} label="by day" /> · <CsvLink href={`${csv}type`} label="by type" />
          </Text>
        </Group>
        {byDay.isPending ? <Loading /> : byDay.isError ? <ErrorState error={byDay.error} retry={() => void byDay.refetch()} /> : <DayChart rows={byDay.data} />}
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="sm">
          By type
        </Title>
        {byType.isPending ? (
          <Loading />
        ) : byType.isError ? (
          <ErrorState error={byType.error} retry={() => void byType.refetch()} />
        ) : (
          <TypeTable rows={byType.data} />
        )}
      </Paper>
    </Stack>
  );
}

/** A CSV download: the API answers CSV to `Accept: text/csv`, which a plain link cannot send, so it is fetched. */
function CsvLink({ href, label }: { href: string; label: string }) {
  const download = async () => {
    const res = await fetch(href, { headers: { Accept: "text/csv" }, credentials: "same-origin" });
    if (!res.ok) return;
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement("a");
    a.href = url;
    a.download = `usage-${label.replace(" ", "-")}.csv`;
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <Anchor component="button" type="button" size="sm" onClick={() => void download()}>
      {label}
    </Anchor>
  );
}

function DayChart({ rows }: { rows: UsageRow[] }) {
  const data = rows.map((row) => ({ day: "day" in row ? row.day!.slice(5) : "", jobs: row.jobs_created, attempts: row.attempts_started }));
  const total = rows.reduce((sum, row) => sum + row.jobs_created + row.attempts_started + row.webhook_deliveries, 0);
  if (total === 0) return <Empty title="Nothing used in this range">Jobs created, attempts and webhook deliveries show here by day.</Empty>;
  return (
    <BarChart
      h={260}
      data={data}
      dataKey="day"
      barChartProps={{ title: "Jobs created and attempts started per day", desc: "Two bars per day: jobs created and attempts started." }}
      series={[
        { name: "jobs", label: "Jobs created", color: "blue.6" },
        { name: "attempts", label: "Attempts started", color: "teal.6" },
      ]}
      yAxisProps={{ allowDecimals: false }}
      maxBarWidth={16}
      tickLine="y"
      withLegend
      legendProps={{ verticalAlign: "bottom" }}
    />
  );
}

function TypeTable({ rows }: { rows: UsageRow[] }) {
  if (rows.length === 0) return <Empty title="No job type used in this range">Each type gets its row here.</Empty>;
  return (
    <Table.ScrollContainer minWidth={560} scrollAreaProps={{ viewportProps: { tabIndex: 0, "aria-label": "Usage by job type (scrolls sideways)" } }}>
      <Table striped aria-label="Usage by job type">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Type</Table.Th>
            <Table.Th ta="right">Jobs created</Table.Th>
            <Table.Th ta="right">Attempts</Table.Th>
            <Table.Th ta="right">Attempt seconds</Table.Th>
            <Table.Th ta="right">Webhook deliveries</Table.Th>
            <Table.Th ta="right">Payload bytes</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={"type" in row ? row.type : ""}>
              <Table.Td>{"type" in row ? row.type : ""}</Table.Td>
              <Table.Td ta="right">{row.jobs_created.toLocaleString()}</Table.Td>
              <Table.Td ta="right">{row.attempts_started.toLocaleString()}</Table.Td>
              <Table.Td ta="right">{row.attempt_seconds.toLocaleString(undefined, { maximumFractionDigits: 1 })}</Table.Td>
              <Table.Td ta="right">{row.webhook_deliveries.toLocaleString()}</Table.Td>
              <Table.Td ta="right">{row.payload_bytes.toLocaleString()}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function Quotas() {
  const quotas = useQuotas();
  if (quotas.isPending) return <Loading />;
  if (quotas.isError) return <ErrorState error={quotas.error} retry={() => void quotas.refetch()} />;
  const inForce = quotas.data.quotas.filter((q) => q.limit !== null);
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h4" mb="sm">
        Quotas
      </Title>
      {inForce.length === 0 ? (
        <Text size="sm">No quota is in force for this organization: the deployment's operator sets them.</Text>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          {inForce.map((quota) => {
            const share = Math.min(100, (quota.used / quota.limit!) * 100);
            return (
              <Stack key={quota.name} gap={4}>
                <Group justify="space-between">
                  <Text size="sm" fw={500}>
                    {QUOTA_LABELS[quota.name]}
                  </Text>
                  <Text size="sm">
                    {quota.used.toLocaleString()} of {quota.limit!.toLocaleString()}
                  </Text>
                </Group>
                <Progress
                  value={share}
                  color={share >= 100 ? "red" : share >= 80 ? "orange" : "blue"}
                  aria-label={`${QUOTA_LABELS[quota.name]}: ${share.toFixed(0)} % used`}
                />
                {quota.resets_at && (
                  <Text size="xs" c="dimmed">
                    Starts over {new Date(quota.resets_at).toUTCString()}
                  </Text>
                )}
              </Stack>
            );
          })}
        </SimpleGrid>
      )}
    </Paper>
  );
}

/**
 * For the overview: a notice while a quota is used up (new jobs are being refused with 429 quota_exceeded), naming
 * it, with a link to the Usage page. Owners and admins only (they can read the quotas); nothing otherwise.
 */
export function QuotaNotice() {
  const session = useSession();
  const quotas = useQuotas({ enabled: canManageTeam(session.role) });
  const full = quotas.data?.quotas.filter((q) => q.limit !== null && q.used >= q.limit) ?? [];
  if (full.length === 0) return null;
  return (
    <Alert color="red" title="New jobs are being refused">
      {full.map((q) => `${QUOTA_LABELS[q.name]}: ${q.used.toLocaleString()} of ${q.limit!.toLocaleString()}`).join(" · ")}. Job creation answers 429
      quota_exceeded until the quota frees up. <RouterAnchor to="/usage">See usage and quotas</RouterAnchor>
    </Alert>
  );
}
