// The Queues page's per-queue charts (issue 38): for each type, attempts started per minute (bars) and the p95 wait
// from due to start (line, right axis) over the last hour, from GET /queues/activity — the overview's charting
// (Mantine charts on recharts), small enough for a table row and for a phone. A sentence under each chart says the
// same in words, for screen readers and for a glance.
import "@mantine/charts/styles.css";
import { CompositeChart, type CompositeChartSeries } from "@mantine/charts";
import { Stack, Text } from "@mantine/core";
import type { QueueActivity } from "../data/queues";

export type QueueSeries = QueueActivity["queues"][number];

const SERIES: CompositeChartSeries[] = [
  { name: "starts", label: "Starts", color: "indigo.6", type: "bar" },
  { name: "wait", label: "p95 wait (s)", color: "orange.9", type: "line", yAxisId: "right" },
];

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

/** 1 234 → "1.2k": an axis label stays short however busy the queue. */
const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });

/** "−59 min", "−30 min", "now" for a minute's clock label: the hour's place, short enough that ticks never run together. */
function minuteTick(minutes: string[]) {
  const last = new Date(minutes.at(-1) ?? 0).getTime();
  const ago = new Map(minutes.map((minute) => [clock(minute), Math.round((last - new Date(minute).getTime()) / 60_000)]));
  return (label: string) => {
    const n = ago.get(label);
    return n === undefined ? label : n === 0 ? "now" : `−${n} min`;
  };
}

/**
 * Issue 48 #8: the chart was 300×72 px, its "200" clipped, its ticks run together, no units and no name. Now: as wide
 * as its cell (the whole width on a phone), 132 px high, axes wide enough for their compact labels, a key naming
 * each axis' unit above it, three ticks on the time axis, and one accessible name (what it shows) with the sentence under it.
 */
export function QueueChart({ series, minutes, coveredFrom }: { series: QueueSeries; minutes: string[]; coveredFrom: string | null }) {
  const data = minutes.map((minute, i) => ({
    time: clock(minute),
    starts: series.started[i] ?? 0,
    // Seconds on the right axis; a minute without a start has no point (the line skips it).
    wait: series.wait_p95_ms[i] === null || series.wait_p95_ms[i] === undefined ? null : series.wait_p95_ms[i]! / 1000,
  }));
  const summary = activitySummary(series, minutes);
  const quiet = series.started.every((n) => !n);
  const tick = minuteTick(minutes);
  const name = `${series.type}: attempts started per minute (bars, left axis) and p95 wait in seconds (line, right axis), last hour`;
  return (
    <Stack gap={2} data-queue-chart={series.type} w={{ base: "100%", sm: 380 }} maw="100%" miw={0}>
      {/* A quiet hour is said in words only: sixty empty minutes draw nothing worth the room. */}
      {!quiet && (
        <Text size="xs" c="dimmed" aria-hidden data-testid="queue-chart-key">
          <span style={{ color: "var(--mantine-color-indigo-6)" }}>▮</span> starts/min (left) ·{" "}
          <span style={{ color: "var(--mantine-color-orange-9)" }}>—</span> p95 wait, s (right)
        </Text>
      )}
      {!quiet && (
        <div role="img" aria-label={name} data-testid="queue-chart">
          <CompositeChart
            h={132}
            data={data}
            dataKey="time"
            series={SERIES}
            withRightYAxis
            yAxisProps={{ allowDecimals: false, width: 44, tickFormatter: (n: number) => compact.format(n), tickCount: 3 }}
            rightYAxisProps={{ width: 44, tickFormatter: (n: number) => compact.format(n), tickCount: 3 }}
            xAxisProps={{
              ticks: [0, Math.floor(minutes.length / 2), minutes.length - 1].map((i) => clock(minutes[i]!)),
              tickFormatter: tick,
              tickMargin: 6,
              height: 30,
            }}
            gridAxis="none"
            tickLine="none"
            maxBarWidth={6}
            curveType="linear"
            // Dots, so a wait of a single busy minute shows (a line needs two points).
            dotProps={{ r: 2, strokeWidth: 1 }}
            connectNulls={false}
            withTooltip
            tooltipAnimationDuration={0}
            composedChartProps={{ margin: { top: 6, right: 0, bottom: 6, left: 0 } }}
          />
        </div>
      )}
      <Text size="xs" c="dimmed" data-testid="queue-activity-summary">
        {summary}
        {coveredFrom ? ` Minutes before ${clock(coveredFrom)} are not counted (too many events to read).` : ""}
      </Text>
    </Stack>
  );
}
