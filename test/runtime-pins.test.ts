// The runtime is pinned in the repository (docs/reference/operations.md#supported-runtime): every file that names a Node.js version names the same major
// as the `node` dev dependency npm scripts run on, and the processes the tests start run on that binary, not on
// the machine's system Node.
import { readFileSync } from "node:fs";
import path from "node:path";
import { CORE_SCHEMA, load, mergeTag } from "js-yaml";
import semver from "semver";
import { freePort, repoRoot, spawnService, suiteStorage } from "@conveyor/testkit";

const read = (file: string) => readFileSync(path.join(repoRoot, file), "utf8");
const manifest = JSON.parse(read("package.json")) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
  packageManager: string;
  scripts: Record<string, string>;
};
const pinned = manifest.devDependencies.node!;
const major = semver.major(pinned);

describe("the pinned runtime", () => {
  it("is one exact version of the node package, inside the range engines names", () => {
    expect(semver.valid(pinned)).toBe(pinned);
    expect(semver.satisfies(pinned, manifest.engines.node)).toBe(true);
    // engines admits no other major: a different one is a decision, made here and in every file below.
    expect(semver.minVersion(manifest.engines.node)!.major).toBe(major);
    expect(semver.satisfies(`${major + 1}.0.0`, manifest.engines.node)).toBe(false);
  });

  it("is the major .nvmrc, .node-version, both Dockerfiles, docker-compose's builds and .ci/run name", () => {
    expect(read(".nvmrc").trim()).toBe(String(major));
    expect(read(".node-version").trim()).toBe(pinned);
    for (const dockerfile of ["Dockerfile.api", "Dockerfile.worker"]) {
      const bases = [...read(dockerfile).matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!).filter((image) => image.startsWith("node:"));
      expect([dockerfile, bases.length > 0]).toEqual([dockerfile, true]);
      for (const image of bases) expect([dockerfile, image]).toEqual([dockerfile, expect.stringMatching(new RegExp(`^node:${major}-`))]);
    }
    // Compose builds the apps from those Dockerfiles and names no node image of its own.
    const compose = load(read("docker-compose.yml"), { schema: CORE_SCHEMA.withTags(mergeTag) }) as {
      services: Record<string, { image?: string; build?: { dockerfile: string } }>;
    };
    const builds = Object.values(compose.services).flatMap((service) => (service.build ? [service.build.dockerfile] : []));
    expect([...new Set(builds)].sort()).toEqual(["Dockerfile.api", "Dockerfile.worker"]);
    for (const service of Object.values(compose.services)) expect(service.image ?? "").not.toMatch(/^node:/);
    // CI runs the pinned binary, prints its version and compares its major with .nvmrc's.
    const ci = read(".ci/run");
    expect(ci).toContain('node="$PWD/node_modules/.bin/node"');
    expect(ci).toMatch(/wanted=\$\(tr -d '\[:space:\]' < \.nvmrc\)/);
    expect(ci).toContain('[ "$major" = "$wanted" ] || fail');
  });

  it("checks engines on install, in the images' builds too: what the root postinstall runs is copied before npm ci", () => {
    expect(manifest.scripts.postinstall).toMatch(/^node scripts\/check-engines\.mjs && /);
    for (const dockerfile of ["Dockerfile.api", "Dockerfile.worker"]) {
      const lines = read(dockerfile).split("\n");
      const install = lines.findIndex((line) => /^RUN npm ci --no-audit --no-fund$/.test(line));
      expect([dockerfile, install > 0]).toEqual([dockerfile, true]);
      expect([dockerfile, lines.slice(0, install).includes("COPY scripts/check-engines.mjs ./scripts/")]).toEqual([dockerfile, true]);
    }
  });

  it("runs npm scripts, and so this test, on the pinned node from node_modules/.bin", () => {
    expect(process.versions.node).toBe(pinned);
    expect(process.execPath).toBe(path.join(repoRoot, "node_modules/node/bin/node"));
  });

  it("leaves the typed client its own wider engines, for its users' runtimes", () => {
    const client = JSON.parse(read("packages/client/package.json")) as { engines: { node: string } };
    expect(semver.satisfies("20.19.0", client.engines.node)).toBe(true);
    expect(semver.satisfies(pinned, client.engines.node)).toBe(true);
  });

  describe("processes the tests start", () => {
    const suite = suiteStorage();

    it("run the API and the worker on the pinned node, and each says so once it is up", async () => {
      const env = suite.env();
      const api = spawnService("api", { ...env, PORT: String(await freePort()) });
      const worker = spawnService("worker", { ...env, WORKER_METRICS_PORT: "0", WORKER_TYPES: "webhook" });
      try {
        const [listening, started] = await Promise.all([
          api.waitForOutput(/API listening on .*Node\.js (v[\d.]+)/, 30_000),
          worker.waitForOutput(/worker started on Node\.js (v[\d.]+)/, 30_000),
        ]);
        expect([listening[1], started[1]]).toEqual([`v${pinned}`, `v${pinned}`]);
      } finally {
        await Promise.all([api.stop("SIGTERM"), worker.stop("SIGTERM")]);
      }
    });
  });
});
