// The Grafana dashboard and the Prometheus alert rules in deploy/ (docs/reference/high-availability.md#scale-out-and-observability), read against what the processes really
// export: the files parse, every query is valid PromQL, every rule is complete, and every metric they name is on the
// API's or a worker's /metrics (the names and kinds their registries serve).
import { readFileSync } from "node:fs";
import path from "node:path";
import { load } from "js-yaml";
import { parser } from "@prometheus-io/lezer-promql";
import { createApiMetrics } from "@conveyor/api";
import { createWorkerMetrics } from "@conveyor/worker";

const root = path.resolve(__dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const DASHBOARD = "deploy/grafana/conveyor-dashboard.json";
const ALERTS = "deploy/prometheus/conveyor-alerts.yml";

type Rule = { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
type Panel = { title: string; type: string; targets?: { expr: string; refId: string }[]; panels?: Panel[] };

/** Names a Prometheus scrape of these registries can return: each metric, and a histogram's series. */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const text of [await createApiMetrics().registry.metrics(), await createWorkerMetrics().registry.metrics()]) {
    for (const [, name, kind] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      names.add(name!);
      if (kind === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(name! + suffix);
      if (kind === "summary") for (const suffix of ["_sum", "_count"]) names.add(name! + suffix);
    }
  }
  return names;
}

/** The metric names an expression selects (Identifier nodes under a VectorSelector). */
function selectedMetrics(expr: string): string[] {
  const names: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name === "Identifier" && node.node.parent?.name === "VectorSelector") names.push(expr.slice(node.from, node.to));
    },
  });
  return names;
}

function parseErrors(expr: string): number[] {
  const errors: number[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
    },
  });
  return errors;
}

const dashboard = JSON.parse(read(DASHBOARD)) as { title: string; uid: string; panels: Panel[]; templating: { list: { name: string }[] } };
const alerts = load(read(ALERTS)) as { groups: { name: string; rules: Rule[] }[] };
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const dashboardExprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `${DASHBOARD} "${p.title}" ${t.refId}`, expr: t.expr })));
const alertExprs = alerts.groups.flatMap((g) => g.rules.map((r) => ({ where: `${ALERTS} ${r.alert ?? r.record}`, expr: r.expr })));
// Grafana's variables, as Prometheus would see them once substituted.
const substituted = (expr: string) => expr.replaceAll("$type", ".*").replaceAll("$__rate_interval", "5m");

describe("the Grafana dashboard and the Prometheus alert rules", () => {
  it("are a dashboard with panels and queries, and rule groups of complete alerts", () => {
    expect(dashboard.uid).toBe("conveyor-overview");
    expect(panels.length).toBeGreaterThanOrEqual(8);
    for (const panel of panels) if (panel.type !== "row") expect([panel.title, panel.targets?.length ?? 0]).not.toEqual([panel.title, 0]);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "type"]);
    expect(alerts.groups.length).toBeGreaterThan(0);
    const names = alerts.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(new Set(names).size).toBe(names.length);
    for (const rule of alerts.groups.flatMap((g) => g.rules)) {
      expect(rule.alert).toMatch(/^Conveyor[A-Za-z]+$/);
      expect([rule.alert, rule.labels?.severity]).toEqual([rule.alert, expect.stringMatching(/^(critical|warning)$/)]);
      expect([rule.alert, typeof rule.annotations?.summary, typeof rule.annotations?.description]).toEqual([rule.alert, "string", "string"]);
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    }
  });

  it("use only valid PromQL", () => {
    const invalid = [...dashboardExprs, ...alertExprs].filter(({ expr }) => parseErrors(substituted(expr)).length > 0).map((e) => e.where);
    expect(invalid).toEqual([]);
    // The parser does flag what Prometheus would refuse.
    expect(parseErrors("sum(rate(conveyor_jobs_created_total[5m])").length).toBeGreaterThan(0);
  });

  it("name only metrics the API and the workers export, and use the backlog gauges", async () => {
    const exported = await exportedNames();
    const used = new Map<string, string>();
    for (const { where, expr } of [...dashboardExprs, ...alertExprs]) for (const name of selectedMetrics(substituted(expr))) used.set(name, where);
    // Variables' queries (label_values(metric, label)) name metrics too.
    for (const [, name] of read(DASHBOARD).matchAll(/label_values\((\w+)/g)) used.set(name!, `${DASHBOARD} variables`);
    const missing = [...used].filter(([name]) => !exported.has(name)).map(([name, where]) => `${name} (${where})`);
    expect(missing).toEqual([]);
    for (const name of ["conveyor_queue_backlog", "conveyor_queue_oldest_due_seconds", "conveyor_queue_backlog_up"]) expect(used.has(name)).toBe(true);
    // The check itself finds names in selectors, also inside functions and with matchers.
    expect(selectedMetrics('max by (type) (rate(conveyor_x_total{a="b"}[5m])) / on() conveyor_y')).toEqual(["conveyor_x_total", "conveyor_y"]);
  });
});
