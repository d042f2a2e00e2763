// deploy/kubernetes (docs/reference/high-availability.md#scale-out-and-observability), rendered with `kubectl kustomize` and checked without a cluster: every object valid
// against the Kubernetes and KEDA schemas (deploy/kubernetes/validate.mjs, which must also refuse broken objects),
// and the properties the operations guide promises — probes, shutdown grace above WORKER_SHUTDOWN_MS, a budget and a
// KEDA ScaledObject on the leader's due-job gauge per worker group, every type served by exactly one group, Secrets
// by reference only, variables the apps really read, and the overlay's images, namespace and settings.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import type Joi from "joi";
import { loadAll } from "js-yaml";
import { parser } from "@prometheus-io/lezer-promql";
import { BUILT_IN_TYPES, WEBHOOK_DELIVERY_TYPE } from "@conveyor/contracts";
import { apiEnvSchema } from "@conveyor/api";
import { createWorkerMetrics, handlerEnv, workerEnvSchema } from "@conveyor/worker";

const root = path.resolve(__dirname, "..");
const KUBERNETES = path.join(root, "deploy/kubernetes");
const VALIDATE = path.join(KUBERNETES, "validate.mjs");

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: unknown } };
type Probe = { httpGet?: { path: string; port: string | number } };
type Container = {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean } }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
};
type PodTemplate = { metadata: { labels: Record<string, string> }; spec: { terminationGracePeriodSeconds?: number; containers: Container[] } };
type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
};

function render(dir: string): { text: string; objects: K8sObject[] } {
  let text: string;
  try {
    text = execFileSync("kubectl", ["kustomize", path.join(KUBERNETES, dir)], { encoding: "utf8" });
  } catch (error) {
    throw new Error(`kubectl kustomize ${dir} failed (Debian's kubectl package must be installed; .ci/run installs it): ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { text, objects: loadAll(text) as K8sObject[] };
}

function validate(yaml: string): { status: number | null; results: { kind: string; name: string; ok: boolean; errors: string[] }[] } {
  const run = spawnSync(process.execPath, [VALIDATE], { input: yaml, encoding: "utf8", cwd: root });
  if (run.error) throw run.error;
  return {
    status: run.status,
    results: run.stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  };
}

const schemaKeys = (schema: Joi.ObjectSchema) => Object.keys((schema.describe() as { keys: Record<string, unknown> }).keys);
const known = new Set([...schemaKeys(apiEnvSchema), ...schemaKeys(workerEnvSchema), ...Object.keys(handlerEnv)]);
const base = render("base");
const overlay = render("overlays/example");
const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const find = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const pod = (deployment: K8sObject) => deployment.spec.template as PodTemplate;
const envOf = (container: Container) => new Map((container.env ?? []).map((e) => [e.name, e]));
const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
const workers = (objects: K8sObject[]) => byKind(objects, "Deployment").filter((d) => pod(d).metadata.labels["app.kubernetes.io/component"] === "worker");

describe("deploy/kubernetes", () => {
  it("renders, base and example overlay, into objects valid against the Kubernetes and KEDA schemas", () => {
    for (const { text, objects } of [base, overlay]) {
      const { status, results } = validate(text);
      expect(results.filter((r) => !r.ok)).toEqual([]);
      expect(status).toBe(0);
      expect(results).toHaveLength(objects.length);
    }
    const kinds = overlay.objects.map((o) => o.kind).sort();
    for (const kind of ["Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Job", "ScaledObject", "ConfigMap", "Namespace"]) {
      expect(kinds).toContain(kind);
    }
  });

  it("has a validator that refuses a misspelt field, a wrong type, a bad KEDA trigger and an unknown kind", () => {
    const deployment = structuredClone(find(overlay.objects, "Deployment", "conveyor-api"));
    (pod(deployment).spec as Record<string, unknown>).terminationGracePeriodSecond = 40;
    const wrongType = structuredClone(find(overlay.objects, "Deployment", "conveyor-worker-pdf"));
    (pod(wrongType).spec as Record<string, unknown>).terminationGracePeriodSeconds = "eighty";
    const scaled = structuredClone(find(overlay.objects, "ScaledObject", "conveyor-worker-pdf"));
    scaled.spec.triggers[0].metadata.threshold = 2;
    const unknown = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } };
    const { status, results } = validate([deployment, wrongType, scaled, unknown].map((o) => JSON.stringify(o)).join("\n---\n"));
    expect(status).toBe(1);
    expect(results.map((r) => r.ok)).toEqual([false, false, false, false]);
    expect(results[0]!.errors.join()).toMatch(/terminationGracePeriodSecond/);
    expect(results[1]!.errors.join()).toMatch(/terminationGracePeriodSeconds must be integer/);
    expect(results[2]!.errors.join()).toMatch(/threshold must be string/);
    expect(results[3]!.errors.join()).toMatch(/no schema for example\.com\/v1 Widget/);
  });

  it("runs the API behind a Service with probes on /healthz and /readyz, an HPA and a disruption budget", () => {
    const api = find(base.objects, "Deployment", "conveyor-api");
    const container = pod(api).spec.containers[0]!;
    expect(container.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(container.readinessProbe?.httpGet?.path).toBe("/readyz");
    const service = find(base.objects, "Service", "conveyor-api");
    expect(matches(service.spec.selector, pod(api).metadata.labels)).toBe(true);
    expect(container.ports?.map((p) => p.name)).toContain(service.spec.ports[0].targetPort);
    const hpa = find(base.objects, "HorizontalPodAutoscaler", "conveyor-api");
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: "conveyor-api" });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const budgets = byKind(base.objects, "PodDisruptionBudget").filter((b) => matches(b.spec.selector.matchLabels, pod(api).metadata.labels));
    expect(budgets).toHaveLength(1);
  });

  it("gives each worker group a shutdown grace above WORKER_SHUTDOWN_MS, probes, a budget and a ScaledObject on its types' due jobs", async () => {
    const groups = workers(base.objects);
    expect(groups.length).toBeGreaterThanOrEqual(2);
    const exported = await createWorkerMetrics().registry.metrics();
    const served: string[] = [];
    let alwaysOn = 0;
    for (const deployment of groups) {
      const name = deployment.metadata.name;
      const container = pod(deployment).spec.containers[0]!;
      const env = envOf(container);
      // SIGTERM → WORKER_SHUTDOWN_MS for in-flight jobs → 5 s after the abort → the last writes; then SIGKILL.
      const shutdownMs = Number(env.get("WORKER_SHUTDOWN_MS")?.value);
      expect([name, shutdownMs > 0]).toEqual([name, true]);
      expect([name, pod(deployment).spec.terminationGracePeriodSeconds! * 1000]).toEqual([name, expect.any(Number)]);
      expect(pod(deployment).spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThanOrEqual(shutdownMs + 5_000 + 5_000);
      const metricsPort = Number(env.get("WORKER_METRICS_PORT")?.value);
      expect(container.ports?.find((p) => p.name === "metrics")?.containerPort).toBe(metricsPort);
      expect([container.livenessProbe?.httpGet, container.readinessProbe?.httpGet]).toEqual([
        { path: "/healthz", port: "metrics" },
        { path: "/healthz", port: "metrics" },
      ]);

      const types = env.get("WORKER_TYPES")!.value!.split(",");
      served.push(...types);
      const budgets = byKind(base.objects, "PodDisruptionBudget").filter((b) => matches(b.spec.selector.matchLabels, pod(deployment).metadata.labels));
      expect([name, budgets.length]).toEqual([name, 1]);
      const scaled = byKind(base.objects, "ScaledObject").filter((s) => s.spec.scaleTargetRef.name === name);
      expect([name, scaled.length]).toEqual([name, 1]);
      const trigger = scaled[0]!.spec.triggers[0];
      expect(trigger.type).toBe("prometheus");
      const query: string = trigger.metadata.query;
      let parseError = false;
      parser.parse(query).iterate({ enter: (node) => void (node.type.isError && (parseError = true)) });
      expect([name, parseError]).toEqual([name, false]);
      // The leader's gauge of exactly this group's types, due and running.
      expect(query).toMatch(/conveyor_queue_backlog\{/);
      expect(exported).toMatch(/^# TYPE conveyor_queue_backlog gauge$/m);
      const typeMatcher = /type=~"([^"]+)"/.exec(query)![1]!;
      expect(typeMatcher.split("|").sort()).toEqual([...types].sort());
      expect(/state=~"([^"]+)"/.exec(query)![1]!.split("|").sort()).toEqual(["due", "running"]);
      expect(Number(trigger.metadata.threshold)).toBe(Number(env.get("WORKER_CONCURRENCY")!.value));
      if (scaled[0]!.spec.minReplicaCount >= 1) alwaysOn++;
    }
    // Some worker always runs to hold the leader's lease, which dispatches and reports the backlog.
    expect(alwaysOn).toBeGreaterThanOrEqual(1);
    expect([...served].sort()).toEqual([...BUILT_IN_TYPES, WEBHOOK_DELIVERY_TYPE].sort());
  });

  it("references Secrets and never carries one, and sets only variables the apps read", () => {
    expect(byKind(overlay.objects, "Secret")).toEqual([]);
    const config = byKind(overlay.objects, "ConfigMap").find((c) => c.metadata.name.startsWith("conveyor-config"))!;
    expect(Object.keys(config.data!).filter((name) => !known.has(name))).toEqual([]);
    const containers = [...byKind(overlay.objects, "Deployment"), ...byKind(overlay.objects, "Job")].flatMap((o) => pod(o).spec.containers);
    for (const container of containers) {
      expect([container.name, (container.env ?? []).map((e) => e.name).filter((name) => !known.has(name))]).toEqual([container.name, []]);
      for (const variable of container.env ?? []) {
        if (/SECRET|KEY|PASSWORD|TOKEN|DATABASE_URL|REDIS_URL/.test(variable.name)) {
          expect([variable.name, variable.value, variable.valueFrom?.secretKeyRef?.name]).toEqual([variable.name, undefined, "conveyor-secrets"]);
        }
      }
      for (const from of container.envFrom ?? []) if (from.configMapRef) expect(from.configMapRef.name).toBe(config.metadata.name);
    }
    for (const name of ["DATABASE_URL", "REDIS_URL", "JWT_SECRET", "WEBHOOK_SECRETS_KEY"]) {
      expect(envOf(pod(find(overlay.objects, "Deployment", "conveyor-api")).spec.containers[0]!).get(name)?.valueFrom?.secretKeyRef).toEqual({
        name: "conveyor-secrets",
        key: name,
      });
    }
  });

  it("migrates with a Job on the API image, running the compiled migrate command", () => {
    const job = find(overlay.objects, "Job", "conveyor-migrate");
    const api = find(overlay.objects, "Deployment", "conveyor-api");
    const container = pod(job).spec.containers[0]!;
    expect(container.image).toBe(pod(api).spec.containers[0]!.image);
    expect(container.command?.slice(0, 2)).toEqual(["node", "packages/db/dist/cli/migrate.js"]);
    expect(existsSync(path.join(root, "packages/db/src/cli/migrate.ts"))).toBe(true);
    expect(envOf(container).get("DATABASE_URL")?.valueFrom?.secretKeyRef?.name).toBe("conveyor-secrets");
  });

  it("puts the optional PgBouncer (transaction mode) in the example overlay, with the direct URL for every process (issue 37)", () => {
    const bouncer = find(overlay.objects, "Deployment", "conveyor-pgbouncer");
    expect(pod(bouncer).spec.containers[0]!.command).toEqual(["pgbouncer", "/etc/pgbouncer/pgbouncer.ini"]);
    expect(find(overlay.objects, "Service", "conveyor-pgbouncer")).toBeDefined();
    expect(byKind(base.objects, "Deployment").map((o) => o.metadata.name)).not.toContain("conveyor-pgbouncer");
    for (const object of [...byKind(overlay.objects, "Deployment"), ...byKind(overlay.objects, "Job")]) {
      if (object.metadata.name === "conveyor-pgbouncer") continue;
      expect([object.metadata.name, envOf(pod(object).spec.containers[0]!).get("DATABASE_DIRECT_URL")?.valueFrom?.secretKeyRef]).toEqual([
        object.metadata.name,
        { name: "conveyor-secrets", key: "DATABASE_DIRECT_URL" },
      ]);
    }
  });

  it("has an example overlay that sets the namespace, the images, PUBLIC_URL and the Prometheus KEDA asks", () => {
    for (const object of overlay.objects) if (object.kind !== "Namespace") expect([object.kind, object.metadata.namespace]).toEqual([object.kind, "conveyor"]);
    const images = [...byKind(overlay.objects, "Deployment"), ...byKind(overlay.objects, "Job")]
      .filter((o) => o.metadata.name !== "conveyor-pgbouncer")
      .map((o) => pod(o).spec.containers[0]!.image);
    for (const image of images) expect(image).toMatch(/^registry\.example\.com\/conveyor\/(api|worker):1\.0\.0$/);
    const config = byKind(overlay.objects, "ConfigMap")[0]!;
    expect(config.data!.PUBLIC_URL).toBe("https://conveyor.example.com");
    for (const scaled of byKind(overlay.objects, "ScaledObject"))
      expect(scaled.spec.triggers[0].metadata.serverAddress).toBe("http://prometheus.monitoring.svc:9090");
  });
});
