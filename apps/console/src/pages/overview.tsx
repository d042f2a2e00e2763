// The overview (docs/reference/tenants.md#the-console): jobs per minute by status and by type, the failure rate and the queue's depth, over
// the last hour or day (GET /jobs/stats). Its charts (Mantine charts on recharts) load with this page only. Every
// figure and every bar opens the jobs list filtered to what it counts (status, due now or later, type and creation
// time), and the axes count whole jobs.
import "@mantine/charts/styles.css";
import { BarChart, CompositeChart, type CompositeChartSeries } from "@mantine/charts";
import { Anchor, Paper, SegmentedControl, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useNavigate } from "@tanstack/react-router";
import { useRef, useState } from "react";
import { Empty } from "../ui/states";
import { RouterAnchor } from "../ui/link";
import { QueryList } from "../ui/list";
import { Heading } from "../ui/page";
import type { JobFilter } from "./job-search";
import { useJobStats } from "../data/jobs";

import { QuotaNotice } from "./usage";
import { bucketSearch, clock, FiguresTable, type Bucket, type Stats, type Window } from "./overview-figures";

// Created jobs as a line over the finished ones stacked as bars: a job counts once as created and once as finished,
// so stacking all four would add up to nothing meaningful, and four bars side by side per minute are hairlines.
const STATUS_SERIES: CompositeChartSeries[] = [
  { name: "done", color: "green.6", type: "bar" },
  { name: "failed", color: "red.6", type: "bar" },
  { name: "cancelled", color: "orange.5", type: "bar" },
  { name: "created", color: "gray.7", type: "line" },
];
const TYPE_COLORS = ["indigo.6", "teal.6", "grape.6", "cyan.6", "yellow.6", "pink.6", "lime.6", "blue.6", "violet.6", "orange.6"];

export function OverviewPage() {
  const [window, setWindow] = useState<Window>("hour");
  const stats = useJobStats(window);

  return (
    <Stack>
      <Heading
        action={
          <SegmentedControl
            aria-label="Time window"
            value={window}
            onChange={(value) => setWindow(value as Window)}
            data={[
              { value: "hour", label: "Last hour" },
              { value: "day", label: "Last day" },
            ]}
          />
        }
      >
        Overview
      </Heading>
      <QuotaNotice />
      <QueryList query={stats} loading="Loading statistics…">
        {(data) => <Charts stats={data} window={window} />}
      </QueryList>
    </Stack>
  );
}

/** A figure that opens the jobs it counts: the whole card is one link, named by its label and value. */
function Figure({ label, value, hint, search }: { label: string; value: string; hint?: string; search: JobFilter }) {
  return (
    <RouterAnchor
      to="/jobs"
      search={search}
      underline="never"
      c="inherit"
      display="block"
      miw={0}
      data-figure={label}
      title={`Show these jobs (${label.toLowerCase()})`}
    >
      <Paper withBorder p="md" h="100%" className="overview-figure">
        <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
          {label}
        </Text>
        <Text size="xl" fw={700} data-testid={`figure-${label.toLowerCase().replace(/\W+/g, "-")}`}>
          {value}
        </Text>
        {hint && (
          <Text size="xs" c="dimmed">
            {hint}
          </Text>
        )}
      </Paper>
    </RouterAnchor>
  );
}

/** A bar of one or two jobs beside a spike still shows: a count above zero is at least this many pixels high. */
const MIN_BAR_PX = 4;
const minBar = (value: number | null | undefined) => (value ? MIN_BAR_PX : 0);

function Charts({ stats, window }: { stats: Stats; window: Window }) {
  const navigate = useNavigate();
  const perMinute = stats.bucket_seconds / 60;
  const windowStart = stats.buckets[0]?.start;
  const open = (index: number, extra: JobFilter, by: "created" | "finished" = "created") => {
    const bucket = stats.buckets[index];
    if (bucket) void navigate({ to: "/jobs", search: bucketSearch(bucket.start, stats.bucket_seconds, extra, by) });
  };
  // recharts calls a bar's onClick with the bar's data and index; then the chart's own, which opens the jobs created
  // in the minute clicked (the line) unless a bar took the click.
  const barTookClick = useRef(false);
  const onSegment = (extra: JobFilter, by: "created" | "finished" = "created") => ({
    onClick: (_data: unknown, index: number) => {
      barTookClick.current = true;
      open(index, extra, by);
    },
    cursor: "pointer",
    minPointSize: minBar,
  });
  const onChart = (state: { activeTooltipIndex?: number | string | null } | null) => {
    if (barTookClick.current) {
      barTookClick.current = false;
      return;
    }
    const index = Number(state?.activeTooltipIndex);
    if (Number.isInteger(index)) open(index, {});
  };
  const unit = perMinute === 1 ? "per minute" : `per ${perMinute} minutes`;
  const types = [...new Set(stats.buckets.flatMap((bucket) => Object.keys(bucket.by_type ?? {})))].sort();
  const byStatus = stats.buckets.map((bucket) => ({
    time: clock(bucket.start, window),
    created: bucket.created,
    done: bucket.done,
    failed: bucket.failed,
    cancelled: bucket.cancelled,
  }));
  // Jobs created per type: what each service asked for, whatever became of it.
  const byType = stats.buckets.map((bucket) => ({
    time: clock(bucket.start, window),
    ...Object.fromEntries(Object.entries(bucket.by_type ?? {}).map(([type, counts]) => [type, counts.created])),
  }));
  const total = stats.buckets.reduce((sum, bucket) => sum + bucket.created, 0);
  const empty = total === 0 && byStatus.every((b) => !b.done && !b.failed && !b.cancelled);

  return (
    <Stack>
      <SimpleGrid cols={{ base: 2, md: 5 }}>
        <Figure
          label="Failure rate"
          value={stats.failure_rate === null ? "—" : `${(stats.failure_rate * 100).toFixed(1)} %`}
          hint={stats.failure_rate === null ? "nothing finished yet" : "failed ÷ finished"}
          search={{ status: "failed", ...(windowStart ? { created_after: windowStart } : {}) }}
        />
        <Figure label="Pending" value={stats.queue.pending.toLocaleString()} hint="due now + delayed" search={{ status: "pending" }} />
        <Figure label="Processing" value={stats.queue.processing.toLocaleString()} search={{ status: "processing" }} />
        <Figure label="Due now" value={stats.queue.waiting_due.toLocaleString()} hint="waiting to start" search={{ due: "now" }} />
        <Figure label="Delayed" value={stats.queue.delayed.toLocaleString()} hint="run_at or retry later" search={{ due: "later" }} />
      </SimpleGrid>
      <Paper withBorder p="md" component="section" aria-label={`Jobs ${unit} by status`}>
        <Title order={2} size="h4">
          Jobs {unit} by status
        </Title>
        {empty ? (
          <Empty title="No jobs in this window">
            Jobs created or finished in the last {window} show up here. To enqueue one,{" "}
            <RouterAnchor to="/api-keys" underline="always">
              create an API key
            </RouterAnchor>{" "}
            and call <code>POST /jobs</code> with it (see the{" "}
            <Anchor href="/docs" underline="always">
              API reference
            </Anchor>
            ).
          </Empty>
        ) : (
          <>
            <Text size="sm" c="dimmed" mb="sm">
              Bars: jobs that finished, by outcome. Line: jobs created.
            </Text>
            <CompositeChart
              h={240}
              data={byStatus}
              dataKey="time"
              series={STATUS_SERIES}
              barProps={(series) => ({ stackId: "finished", ...onSegment({ status: series.name }, "finished") })}
              yAxisProps={{ allowDecimals: false }}
              // The chart is keyboard-explorable (arrow keys move through the minutes); it needs a name to be announced.
              composedChartProps={{
                title: `Jobs ${unit} by status`,
                desc: "Finished jobs by outcome as stacked bars, created jobs as a line. A bar opens its jobs; elsewhere in a minute, the jobs created in it.",
                onClick: onChart,
                style: { cursor: "pointer" },
              }}
              maxBarWidth={24}
              curveType="linear"
              withDots={false}
              tickLine="y"
              withLegend
              legendProps={{ verticalAlign: "bottom" }}
            />
            <FiguresTable
              caption={`Jobs ${unit} by status`}
              stats={stats}
              window={window}
              columns={[
                { label: "Created", count: (b) => b.created, search: {} },
                ...(["done", "failed", "cancelled"] as const).map((status) => ({
                  label: status[0]!.toUpperCase() + status.slice(1),
                  count: (b: Bucket) => b[status],
                  search: { status },
                  by: "finished" as const,
                })),
              ]}
            />
          </>
        )}
      </Paper>
      <Paper withBorder p="md" component="section" aria-label={`Jobs ${unit} by type`}>
        <Title order={2} size="h4" mb="sm">
          Jobs created {unit} by type
        </Title>
        {types.length === 0 ? (
          <Empty title="No jobs in this window">Each type a service enqueues gets its own colour here.</Empty>
        ) : (
          <>
            <BarChart
              h={240}
              data={byType}
              dataKey="time"
              type="stacked"
              barChartProps={{ title: `Jobs created ${unit} by type`, desc: "Created jobs by type as stacked bars." }}
              series={types.map((name, i) => ({ name, color: TYPE_COLORS[i % TYPE_COLORS.length]! }))}
              barProps={(series) => onSegment({ type: series.name })}
              yAxisProps={{ allowDecimals: false }}
              maxBarWidth={24}
              tickLine="y"
              withLegend
              legendProps={{ verticalAlign: "bottom" }}
            />
            <FiguresTable
              caption={`Jobs created ${unit} by type`}
              stats={stats}
              window={window}
              columns={types.map((type) => ({ label: type, count: (b: Bucket) => b.by_type?.[type]?.created ?? 0, search: { type } }))}
            />
          </>
        )}
      </Paper>
    </Stack>
  );
}
