// A private Postgres server (initdb in a temporary folder, a spare port) for tests that stop or restart
// Postgres: the machine's shared server, which CI uses right after, is never touched.
import { execFile, execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./redis-server";

export type PrivatePostgres = {
  port: number;
  /** URL of database `name` on this server. */
  url(name: string): string;
  start(): void;
  /** Stops at once, like a crash (`-m immediate`). */
  stop(): void;
  /** Stops and deletes the data folder. */
  destroy(): void;
};

function binDir(): string {
  const version = readdirSync("/usr/lib/postgresql").sort().pop();
  if (!version) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  return `/usr/lib/postgresql/${version}/bin`;
}

/** The postgres account's ids when this process runs as root (the servers and PgBouncer refuse root); else null. */
export function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  return { uid: Number(execFileSync("id", ["-u", "postgres"]).toString()), gid: Number(execFileSync("id", ["-g", "postgres"]).toString()) };
}

/** Runs a server binary as the postgres user (initdb refuses root). */
export function asPostgres(binary: string, args: string[]): void {
  const command = path.join(binDir(), binary);
  if (process.getuid?.() === 0) execFileSync("runuser", ["-u", "postgres", "--", command, ...args], { stdio: "ignore" });
  else execFileSync(command, args, { stdio: "ignore" });
}

/** asPostgres without blocking the event loop: what a test does meanwhile (sending load) goes on. */
export function asPostgresAsync(binary: string, args: string[]): Promise<void> {
  const command = path.join(binDir(), binary);
  const [file, argv] = process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  return new Promise((resolve, reject) => execFile(file, argv, (error) => (error ? reject(error) : resolve())));
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-pg-"));
  if (process.getuid?.() === 0) {
    chownSync(dir, Number(execFileSync("id", ["-u", "postgres"]).toString()), Number(execFileSync("id", ["-g", "postgres"]).toString()));
  }
  const data = path.join(dir, "data");
  asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  const handle: PrivatePostgres = {
    port,
    url: (name) => `postgresql://postgres@127.0.0.1:${port}/${name}`,
    start() {
      asPostgres("pg_ctl", [
        "-D",
        data,
        "-l",
        path.join(dir, "server.log"),
        "-w",
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        "start",
      ]);
    },
    stop() {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } catch {
        // already stopped
      }
    },
    destroy() {
      handle.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  handle.start();
  return handle;
}
