// docker-compose.yml and the Dockerfiles, read against the repository (no Docker engine runs here): the
// services and their order of start, Redis that never evicts, workers that scale, a stop grace period longer
// than the worker's shutdown, environment variables the apps really read, and COPY sources that exist.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type Joi from "joi";
import { CORE_SCHEMA, load, mergeTag } from "js-yaml";
import { apiEnvSchema } from "@conveyor/api";
import { handlerEnv, workerEnvSchema } from "@conveyor/worker";

const root = path.resolve(__dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

type Service = {
  image?: string;
  build?: { context: string; dockerfile: string; target?: string };
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  expose?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  container_name?: string;
  restart?: string;
};

// Compose files use YAML merge keys (<<: *app-env).
const compose = load(read("docker-compose.yml"), { schema: CORE_SCHEMA.withTags(mergeTag) }) as { services: Record<string, Service> };
const services = compose.services;

const schemaKeys = (schema: Joi.ObjectSchema) => Object.keys((schema.describe() as { keys: Record<string, unknown> }).keys);
/** The value compose would use when the variable is not set: `${VAR:-default}` → default. */
const defaultOf = (value: string | number) => String(value).replace(/^\$\{\w+:-(.*)\}$/, "$1");
const seconds = (duration: string) => {
  const match = /^(\d+)(ms|s|m)$/.exec(duration);
  if (!match) throw new Error(`unreadable duration ${duration}`);
  return Number(match[1]) * { ms: 0.001, s: 1, m: 60 }[match[2] as "ms" | "s" | "m"];
};

describe("docker-compose.yml", () => {
  it("runs postgres, redis, a one-shot migrate, the api and the worker", () => {
    expect(Object.keys(services).sort()).toEqual(["api", "migrate", "postgres", "redis", "worker"]);
    expect(services.migrate!.restart).toBe("no");
    // The product owner's choice: `prisma migrate deploy`, from the API Dockerfile's `migrate` stage.
    expect(services.migrate!.command).toEqual(["npx", "--no-install", "prisma", "migrate", "deploy"]);
    expect(services.migrate!.build).toEqual({ ...(services.api!.build as object), target: "migrate" });
    expect(readFileSync(path.join(root, "Dockerfile.api"), "utf8")).toMatch(/^FROM build AS migrate$/m);
    expect(services.migrate!.environment?.DATABASE_URL).toBe(services.api!.environment?.DATABASE_URL);
  });

  it("health-checks every long-running service", () => {
    for (const name of ["postgres", "redis", "api", "worker"]) expect([name, services[name]!.healthcheck?.test.length]).toEqual([name, expect.any(Number)]);
    expect(services.api!.healthcheck!.test.join(" ")).toContain("/healthz");
    expect(services.worker!.healthcheck!.test.join(" ")).toContain(`127.0.0.1:${services.worker!.environment!.WORKER_METRICS_PORT}/healthz`);
  });

  it("starts the apps after a successful migration and a healthy Redis, and migrates after Postgres is healthy", () => {
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    for (const app of ["api", "worker"]) {
      expect(services[app]!.depends_on).toEqual({ migrate: { condition: "service_completed_successfully" }, redis: { condition: "service_healthy" } });
    }
  });

  it("runs Redis with AOF on and maxmemory-policy noeviction", () => {
    const command = services.redis!.command!.join(" ");
    expect(command).toMatch(/--appendonly yes/);
    expect(command).toMatch(/--maxmemory-policy noeviction/);
  });

  it("lets `--scale worker=4` work: no published port and no fixed container name on the worker", () => {
    expect(services.worker!.ports).toBeUndefined();
    expect(services.worker!.container_name).toBeUndefined();
    expect(services.worker!.expose).toEqual([String(services.worker!.environment!.WORKER_METRICS_PORT)]);
    expect(services.api!.ports).toEqual(["${API_PORT:-3000}:3000"]);
  });

  it("gives workers a stop grace period longer than WORKER_SHUTDOWN_MS plus the 5 s abort window", () => {
    const shutdownSeconds = Number(defaultOf(services.worker!.environment!.WORKER_SHUTDOWN_MS!)) / 1000;
    expect(shutdownSeconds).toBeGreaterThan(0);
    expect(seconds(services.worker!.stop_grace_period!)).toBeGreaterThan(shutdownSeconds + 5);
  });

  it("sets only variables the apps' configuration schemas know", () => {
    const known = { api: schemaKeys(apiEnvSchema), worker: schemaKeys(workerEnvSchema) };
    for (const app of ["api", "worker"] as const) {
      const unknown = Object.keys(services[app]!.environment!).filter((name) => !known[app].includes(name));
      expect([app, unknown]).toEqual([app, []]);
    }
    expect(Object.keys(services.migrate!.environment!)).toEqual(["DATABASE_URL"]);
  });

  it("passes every setting of each app through, so operators can set it (CONTRIBUTING: Add a setting)", () => {
    const known = { api: schemaKeys(apiEnvSchema), worker: schemaKeys(workerEnvSchema) };
    for (const app of ["api", "worker"] as const) {
      const step = `${app}: settings without their pass-through line \`NAME: \${NAME:-}\` in docker-compose.yml (CONTRIBUTING, "Add a setting")`;
      expect({ [step]: known[app].filter((name) => !(name in services[app]!.environment!)) }).toEqual({ [step]: [] });
    }
  });

  it("passes every handler setting through to the worker, so operators can set them", () => {
    expect(Object.keys(handlerEnv).filter((name) => !(name in services.worker!.environment!))).toEqual([]);
  });

  it("requires JWT_SECRET instead of running the API on the development secret", () => {
    expect(services.api!.environment!.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?/);
    expect(services.api!.environment!.NODE_ENV).toBe("production");
  });

  it("requires WEBHOOK_SECRETS_KEY, the same on the API (which seals webhook secrets) and the workers (which sign with them)", () => {
    for (const app of ["api", "worker"])
      expect([app, services[app]!.environment!.WEBHOOK_SECRETS_KEY]).toEqual([app, expect.stringMatching(/^\$\{WEBHOOK_SECRETS_KEY:\?/)]);
  });
});

describe("README configuration table", () => {
  const readme = read("README.md");
  const rows = new Set([...readme.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]));

  it("documents every variable of the API's and the worker's configuration schemas", () => {
    const missing = [...new Set([...schemaKeys(apiEnvSchema), ...schemaKeys(workerEnvSchema)])].filter((name) => !rows.has(name));
    const step = 'settings without a row in the README\'s configuration table (CONTRIBUTING, "Add a setting")';
    expect({ [step]: missing }).toEqual({ [step]: [] });
  });
});

describe("Dockerfiles", () => {
  type Stage = { name: string; lines: string[] };
  const stages = (file: string): Stage[] => {
    const text = read(file).replace(/\\\n/g, " ");
    const result: Stage[] = [];
    for (const line of text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"))) {
      const from = /^FROM \S+ AS (\S+)$/i.exec(line);
      if (from) result.push({ name: from[1]!, lines: [] });
      else result.at(-1)?.lines.push(line);
    }
    return result;
  };
  /** Sources of `COPY` lines that read the build context (not another stage). */
  const contextSources = (stage: Stage) =>
    stage.lines
      .filter((l) => /^COPY /.test(l) && !/--from=/.test(l))
      .flatMap((l) =>
        l
          .replace(/^COPY\s+(--\S+\s+)*/, "")
          .split(/\s+/)
          .slice(0, -1),
      );
  const fromBuild = (stage: Stage) => stage.lines.filter((l) => /^COPY --from=build /.test(l)).map((l) => l.split(/\s+/)[2]!.replace(/^\/app\//, ""));
  const dockerignore = read(".dockerignore")
    .split("\n")
    .filter((l) => l && !l.startsWith("#"));

  describe.each([
    { file: "Dockerfile.api", app: "api", entry: "apps/api/dist/server.js", names: ["build", "migrate", "prod-deps", "runtime"] },
    { file: "Dockerfile.worker", app: "worker", entry: "apps/worker/dist/main.js", names: ["build", "prod-deps", "runtime"] },
  ])("$file", ({ file, app, entry, names }) => {
    const all = stages(file);
    const runtime = all.at(-1)!;
    const stage = (name: string) => all.find((s) => s.name === name)!;
    const manifest = JSON.parse(read(`apps/${app}/package.json`)) as { main: string; dependencies: Record<string, string>; scripts: Record<string, string> };

    it("builds in stages and runs the last one as the unprivileged node user", () => {
      expect(all.map((s) => s.name)).toEqual(names);
      expect(runtime.lines.filter((l) => /^USER /.test(l))).toEqual(["USER node"]);
      expect(runtime.lines.at(-1)).toBe(`CMD ["node", "${entry}"]`);
      expect(`apps/${app}/${manifest.main.replace(/^\.\//, "")}`).toBe(entry);
    });

    it("installs production dependencies only for the image, and builds with the dev tools", () => {
      const prodInstall = stage("prod-deps").lines.find((l) => /^RUN npm ci /.test(l))!;
      expect(prodInstall).toMatch(/--omit=dev/);
      expect(prodInstall).toMatch(new RegExp(`--workspace @conveyor/${app}\\b`));
      expect(stage("build").lines).toContain(`RUN npx turbo run build --filter=@conveyor/${app}...`);
      expect(runtime.lines).toContain("COPY --from=prod-deps /app ./");
    });

    it("copies only sources that exist in the repository and that .dockerignore does not drop", () => {
      const sources = all.flatMap(contextSources);
      expect(sources.length).toBeGreaterThan(5);
      for (const source of sources) {
        expect([source, existsSync(path.join(root, source))]).toEqual([source, true]);
        expect([source, dockerignore.includes(source)]).toEqual([source, false]);
      }
      expect(dockerignore).toEqual(expect.arrayContaining(["**/node_modules", "**/dist", "packages/db/src/generated"]));
    });

    it("copies the compiled output of the app and of every workspace package it depends on", () => {
      const workspaceDeps = Object.keys(manifest.dependencies)
        .filter((d) => d.startsWith("@conveyor/"))
        .map((d) => `packages/${d.slice("@conveyor/".length)}/dist`);
      // The API also serves the web console's static build (apps/console/dist).
      const served = app === "api" ? ["apps/console/dist"] : [];
      expect(fromBuild(runtime).sort()).toEqual([...workspaceDeps, `apps/${app}/dist`, ...served].sort());
      // The Prisma client is generated into packages/db/src/generated and compiled with the package.
      expect(read("prisma/schema.prisma")).toMatch(/output\s*=\s*"..\/packages\/db\/src\/generated/);
    });

    it("gives every workspace manifest to the production install", () => {
      const manifests = contextSources(stage("prod-deps")).filter((s) => s.endsWith("/package.json"));
      const workspaces = [
        "packages/client",
        "packages/config",
        "packages/contracts",
        "packages/db",
        "packages/logger",
        "packages/net",
        "packages/queue",
        "packages/testkit",
        "packages/tracing",
        "apps/api",
        "apps/console",
        "apps/worker",
      ];
      expect(manifests.sort()).toEqual(workspaces.map((w) => `${w}/package.json`).sort());
    });
  });

  it("builds the web console and ships it where the API looks for it", () => {
    const all = stages("Dockerfile.api");
    expect(all.find((s) => s.name === "build")!.lines).toContain("RUN npx turbo run build --filter=@conveyor/console");
    expect(all.at(-1)!.lines).toContain("COPY --from=build /app/apps/console/dist ./apps/console/dist");
    expect(read("apps/api/src/pages/console/index.ts")).toContain('path.resolve(__dirname, "../../../../console/dist")');
  });

  it("ships the API's migrations and its /docs renderer, which the build copies into dist", () => {
    const runtime = stages("Dockerfile.api").at(-1)!;
    expect(runtime.lines).toContain("COPY prisma ./prisma");
    expect(JSON.parse(read("apps/api/package.json")).scripts.build).toMatch(/node scripts\/copy-docs-bundle\.js/);
    expect(read("apps/api/scripts/copy-docs-bundle.js")).toContain('"dist", "assets", "scalar-standalone.js"');
    expect(read("apps/api/src/pages/docs/bundle.ts")).toContain('"../../assets/scalar-standalone.js"');
  });

  it("gives the worker image Chromium, fonts and the built-in PDF templates", () => {
    const runtime = stages("Dockerfile.worker").at(-1)!;
    const install = runtime.lines.find((l) => /apt-get install/.test(l))!;
    for (const pkg of ["chromium", "fonts-liberation", "fonts-noto-core", "dumb-init"]) expect(install).toContain(pkg);
    expect(runtime.lines.join("\n")).toMatch(/ENV .*PUPPETEER_EXECUTABLE_PATH=\/usr\/bin\/chromium/);
    expect(runtime.lines).toContain("COPY apps/worker/templates ./apps/worker/templates");
    expect(existsSync(path.join(root, "apps/worker/templates/invoice.hbs"))).toBe(true);
  });
});
