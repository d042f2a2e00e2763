// Child processes for the benchmarks: Conveyor's API and worker from source, and the baseline programs.
// Their output is read line by line and dropped, except a baseline's `RESULT {json}` line.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

export const repoRoot = path.resolve(__dirname, "../..");
const tsx = pathToFileURL(path.join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href;

export type Child = { proc: ChildProcess; pid: number; result: Promise<Record<string, unknown>>; stop(signal?: NodeJS.Signals): Promise<void> };

/**
 * Runs a TypeScript entry point. A line `RESULT {json}` on stdout resolves `result`. With BENCH_CPU_PROF=dir,
 * Conveyor's own processes (apps/) write a V8 CPU profile there when they exit.
 */
export function run(entry: string, env: Record<string, string>): Child {
  const profile = process.env.BENCH_CPU_PROF && entry.startsWith("apps/") ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const proc = spawn(process.execPath, [...profile, "--conditions=conveyor-source", "--import", tsx, path.resolve(repoRoot, entry)], {
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
