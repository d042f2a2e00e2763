// The results table and its JSON twin.
export type Row = {
  scenario: string;
  metric: string;
  conveyor: number;
  baseline: number | null;
  baselineName: string;
  unit: string;
  /** The target, as text, and whether it was met. */
  target?: string;
  met?: boolean;
};

const fmt = (n: number | null, unit: string) =>
  n === null || Number.isNaN(n) ? "—" : `${n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(n >= 10 ? 1 : 2)} ${unit}`;

export function ratio(row: Row): number | null {
  return row.baseline ? row.conveyor / row.baseline : null;
}

export function printTable(rows: Row[]): string {
  const header = ["scenario", "metric", "Conveyor", "baseline (same run)", "ratio", "target", ""];
  const lines = rows.map((r) => [
    r.scenario,
    r.metric,
    fmt(r.conveyor, r.unit),
    r.baseline === null ? "—" : `${fmt(r.baseline, r.unit)} (${r.baselineName})`,
    ratio(r) === null ? "—" : `${ratio(r)!.toFixed(2)}×`,
    r.target ?? "",
    r.met === undefined ? "" : r.met ? "met" : "MISSED",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [render(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(render)].join("\n");
}
