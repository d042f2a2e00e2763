// Runs the real API and worker entry points as child processes, from source, with an explicit environment
// and a scratch working directory (so a developer's .env never leaks into a test).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

export const repoRoot = path.resolve(__dirname, "../../..");
const tsxLoader = pathToFileURL(path.join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href;

export const entryPoints = {
  api: path.join(repoRoot, "apps/api/src/server.ts"),
  worker: path.join(repoRoot, "apps/worker/src/main.ts"),
  /** `npm start`'s script: migrates, builds the console if stale, then runs an API and a worker. */
  start: path.join(repoRoot, "scripts/start.ts"),
} as const;

export type ServiceProcess = {
  child: ChildProcess;
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves when the output matches `pattern`; rejects after `timeoutMs` or if the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` and waits for the exit; SIGKILLs after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
};

/** Starts `apps/<kind>` with exactly `env` (plus PATH and HOME). */
export function spawnService(kind: keyof typeof entryPoints, env: Record<string, string>): ServiceProcess {
  const cwd = mkdtempSync(path.join(os.tmpdir(), `conveyor-${kind}-`));
  const child = spawn(process.execPath, ["--conditions=conveyor-source", "--import", tsxLoader, entryPoints[kind]], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? cwd, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString("utf8");
    for (const listener of listeners) listener();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  const waitForOutput = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output.match(pattern);
        if (match) finish(() => resolve(match));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`${kind}: no output matching ${pattern} within ${timeoutMs} ms. Output:\n${output}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      void exited.then((code) => {
        if (listeners.has(check)) finish(() => reject(new Error(`${kind} exited (${code}) before printing ${pattern}. Output:\n${output}`)));
      });
      check();
    });

  return {
    child,
    pid: child.pid!,
    output: () => output,
    waitForOutput,
    exited,
    async stop(signal = "SIGTERM", timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
