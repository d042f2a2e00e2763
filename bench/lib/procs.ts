// Child processes for the benchmarks: Conveyor's API and worker as their images run them (the build, `dist/`), and
// the baseline programs. Their output is read line by line and dropped, except a baseline's `RESULT {json}` line.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

export const repoRoot = path.resolve(__dirname, "../..");
/** The command that runs a TypeScript entry point of the checkout `root` from source, through tsx's loader. */
const fromSource = (entry: string, root = repoRoot): string[] => [
  "--conditions=conveyor-source",
  "--import",
  pathToFileURL(path.join(root, "node_modules/tsx/dist/loader.mjs")).href,
  path.resolve(root, entry),
];

/**
 * The command that runs Conveyor's entry point `entry` (`apps/<app>/src/<file>.ts`, or a package's) from the checkout `root`: its
 * build, `node apps/<app>/dist/<file>.js`, as Dockerfile.api and Dockerfile.worker run it, built first if the build is
 * missing or older than the sources (turbo decides by a hash of the inputs, and answers from its cache when nothing
 * changed). The baselines are measured as their packages ship, so Conveyor is too: from source, through tsx's loader,
 * the same code cost the worker ≈ 17 % more CPU per job (docs/decisions/2026-12-07-benches-run-the-build.md).
 * BENCH_FROM_SOURCE=1 runs the sources instead (a CPU profile then names source lines).
 */
export function conveyorCommand(entry: string, root = repoRoot): string[] {
  if (process.env.BENCH_FROM_SOURCE) return fromSource(entry, root);
  buildApps(root);
  return [path.join(root, entry.replace("/src/", "/dist/").replace(/\.ts$/, ".js"))];
}

const built = new Set<string>();

/** Builds the API and the worker with the packages they import (`npm run build`'s tasks for them), once per checkout. */
function buildApps(root: string): void {
  if (built.has(root)) return;
  execFileSync(
    path.join(root, "node_modules/.bin/turbo"),
    ["run", "build", "--filter=@conveyor/api...", "--filter=@conveyor/worker...", "--output-logs=errors-only", "--log-prefix=none"],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
  );
  built.add(root);
}

export type Child = { proc: ChildProcess; pid: number; result: Promise<Record<string, unknown>>; stop(signal?: NodeJS.Signals): Promise<void> };

/**
 * Runs a TypeScript entry point: Conveyor's (apps/) as built (conveyorCommand), a baseline's through tsx. A line
 * `RESULT {json}` on stdout resolves `result`. With BENCH_CPU_PROF=dir, Conveyor's own processes write a V8 CPU
 * profile there when they exit.
 */
export function run(entry: string, env: Record<string, string>): Child {
  const conveyor = entry.startsWith("apps/");
  const profile = process.env.BENCH_CPU_PROF && conveyor ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const command = conveyor ? conveyorCommand(entry) : fromSource(entry);
  const proc = spawn(process.execPath, [...profile, ...command], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const result = new Promise<Record<string, unknown>>((resolve, reject) => {
    // Only complete lines are looked at, each once: a server's access log must not cost the load generator
    // (which runs in this process) more than reading it.
    let partial = "";
    proc.stdout!.on("data", (c: Buffer) => {
      const lines = (partial + c.toString()).split("\n");
      partial = lines.pop()!.slice(-100_000);
      const line = lines.find((l) => l.startsWith("RESULT "));
      if (line) resolve(JSON.parse(line.slice("RESULT ".length)));
    });
    proc.once("exit", (code) => reject(new Error(`${entry} exited (${code}) without a result. stderr:\n${stderr}`)));
  });
  result.catch(() => {});
  return {
    proc,
    pid: proc.pid!,
    result,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
        proc.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        proc.kill(signal);
      }),
  };
}

/** Resolves when `url` answers 200 (or rejects after `timeoutMs`). */
export async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  } catch {
    return 0;
  }
}

/** Samples a process' RSS every 50 ms until stopped; returns the peak. */
export function rssSampler(pid: number): { stop(): number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMb(pid));
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
