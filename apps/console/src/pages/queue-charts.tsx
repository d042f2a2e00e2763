// The Queues page's per-queue charts (issue 38): for each type, attempts started per minute (bars) and the p95 wait
// from due to start (line, right axis) over the last hour, from GET /queues/activity — the overview's charting
// (Mantine charts on recharts), small enough for a table row and for a phone. A sentence under each chart says the
// same in words, for screen readers and for a glance.
import "@mantine/charts/styles.css";
import { CompositeChart, type CompositeChartSeries } from "@mantine/charts";
import { Stack, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { keys } from "../data/keys";

type Activity = ResponseBody<"/queues/activity", "get">;
export type QueueSeries = Activity["queues"][number];

const SERIES: CompositeChartSeries[] = [
  { name: "starts", label: "Starts", color: "indigo.6", type: "bar" },
  { name: "wait", label: "p95 wait (s)", color: "orange.7", type: "line", yAxisId: "right" },
];

/** The charts' data, read again every 30 seconds (a minute's bar fills in as it goes). */
export function useQueueActivity() {
  return useQuery({ queryKey: keys.queueActivity.all, queryFn: () => call(api.GET("/queues/activity")), refetchInterval: 30_000 });
}

const clock = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

/** 850 → "0.85 s", 190 000 → "3.2 min". */
function waitWords(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/** The hour in one sentence: starts in all, the busiest minute, the longest p95 wait. */
export function activitySummary(series: QueueSeries, minutes: string[]): string {
  const starts = series.started.reduce<number>((sum, n) => sum + (n ?? 0), 0);
  if (starts === 0) return "No starts in the last hour.";
  let busiest = 0;
  series.started.forEach((n, i) => {
    if ((n ?? 0) > (series.started[busiest] ?? 0)) busiest = i;
  });
  const waits = series.wait_p95_ms.filter((w): w is number => w !== null);
  const longest = waits.length ? Math.max(...waits) : 0;
  return `${starts} start${starts === 1 ? "" : "s"} in the last hour, at most ${series.started[busiest]} a minute (${clock(minutes[busiest]!)}); p95 wait up to ${waitWords(longest)}.`;
}

export function QueueChart({ series, minutes, coveredFrom }: { series: QueueSeries; minutes: string[]; coveredFrom: string | null }) {
  const data = minutes.map((minute, i) => ({
    time: clock(minute),
    starts: series.started[i] ?? 0,
    // Seconds on the right axis; a minute without a start has no point (the line skips it).
    wait: series.wait_p95_ms[i] === null || series.wait_p95_ms[i] === undefined ? null : series.wait_p95_ms[i]! / 1000,
  }));
  const summary = activitySummary(series, minutes);
  const quiet = series.started.every((n) => !n);
  return (
    <Stack gap={2} data-queue-chart={series.type} w={{ base: "100%", sm: 300 }} maw="100%" miw={0}>
      {/* A quiet hour is said in words only: sixty empty minutes draw nothing worth the room. */}
      {!quiet && (
        <CompositeChart
          h={72}
          data={data}
          dataKey="time"
          series={SERIES}
          withRightYAxis
          yAxisProps={{ allowDecimals: false, width: 28 }}
          rightYAxisProps={{ width: 32 }}
          xAxisProps={{ interval: 14, tickMargin: 2 }}
          gridAxis="none"
          tickLine="none"
          maxBarWidth={6}
          curveType="linear"
          // Dots, so a wait of a single busy minute shows (a line needs two points).
          dotProps={{ r: 2, strokeWidth: 1 }}
          connectNulls={false}
          withTooltip
          tooltipAnimationDuration={0}
          composedChartProps={{
            title: `${series.type}: starts and p95 wait per minute, last hour`,
            desc: "Bars: attempts started in each minute. Line (right axis): the 95th-percentile wait from due to start, in seconds.",
          }}
        />
      )}
      <Text size="xs" c="dimmed" data-testid="queue-activity-summary">
        {summary}
        {coveredFrom ? ` Minutes before ${clock(coveredFrom)} are not counted (too many events to read).` : ""}
      </Text>
    </Stack>
  );
}
