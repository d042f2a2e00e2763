// A private PgBouncer (Debian's 1.18) in transaction pooling mode on a spare port, in front of any Postgres server:
// what production puts between the service and Postgres (docs/reference/high-availability.md#high-availability). Every database of the server is reachable
// through it under its own name (the `*` entry).
import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./redis-server";
import { postgresUser } from "./postgres-server";
import { waitFor } from "./wait";
import net from "node:net";
import pg from "pg";
import { createDatabase } from "@conveyor/db";
import { withPrisma } from "@conveyor/db/prisma";
import type { TestDatabase } from "./postgres";

export type PgBouncer = {
  port: number;
  /** URL of database `name` through the pooler. */
  url(name: string): string;
  /** Stops it (fast: every client and server connection is dropped) and starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** What PgBouncer logged. */
  log(): string;
  /** The application names of the clients connected through it now (its admin console's SHOW CLIENTS). */
  clients(): Promise<string[]>;
};

export type PgBouncerOptions = {
  /** The Postgres server behind it. Default 127.0.0.1:5432 (the shared one). */
  target?: { host: string; port: number };
  /** Server connections per database and user. Default 20. */
  poolSize?: number;
};

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const target = options.target ?? { host: "127.0.0.1", port: 5432 };
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-pgbouncer-"));
  const ini = path.join(dir, "pgbouncer.ini");
  const logfile = path.join(dir, "pgbouncer.log");
  writeFileSync(path.join(dir, "users.txt"), '"postgres" ""\n"root" ""\n');
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${target.host} port=${target.port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      // The admin console (database "pgbouncer"): SHOW CLIENTS tells which processes come through it.
      "admin_users = postgres",
      "max_client_conn = 800",
      `default_pool_size = ${options.poolSize ?? 20}`,
      // node-postgres sends these at start-up; PgBouncer refuses unknown start-up parameters otherwise.
      "ignore_startup_parameters = extra_float_digits,options",
      `logfile = ${logfile}`,
      "log_connections = 0",
      "log_disconnections = 0",
    ].join("\n") + "\n",
  );
  const user = postgresUser();
  if (user) chownSync(dir, user.uid, user.gid);
  for (const file of ["pgbouncer.ini", "users.txt"]) if (user) chownSync(path.join(dir, file), user.uid, user.gid);

  let child: ChildProcess | undefined;
  const start = async () => {
    // PgBouncer refuses to run as root.
    child = user
      ? spawn("runuser", ["-u", "postgres", "--", "/usr/sbin/pgbouncer", ini], { stdio: "ignore" })
      : spawn("/usr/sbin/pgbouncer", [ini], { stdio: "ignore" });
    await waitFor(async () => ((await canConnect(port)) ? true : null), "PgBouncer to listen", 10_000);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    await exited;
    await waitFor(async () => ((await canConnect(port)) ? null : true), "PgBouncer to stop listening", 10_000);
  };
  await start();
  return {
    port,
    url: (name) => `postgresql://postgres@127.0.0.1:${port}/${name}`,
    restart: async () => {
      await stop();
      await start();
    },
    stop: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    clients: async () => {
      const admin = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/pgbouncer` });
      admin.on("error", () => {});
      await admin.connect();
      try {
        // The admin console speaks only the simple protocol: a query without parameters.
        const { rows } = await admin.query<{ application_name: string }>("SHOW CLIENTS");
        return rows.map((row) => row.application_name);
      } finally {
        await admin.end().catch(() => {});
      }
    },
    log: () => {
      try {
        return readFileSync(logfile, "utf8");
      } catch {
        return "";
      }
    },
  };
}

/**
 * `database` used as production uses it behind a pooler: its URL through `pooler`, the server itself as the direct
 * URL, and a Database (for arranging and asserting) made the same way. Dropping it drops the database.
 */
export function throughPooler(database: TestDatabase, pooler: PgBouncer): TestDatabase {
  const url = pooler.url(database.name);
  const directUrl = database.directUrl ?? database.url;
  const db = withPrisma(createDatabase({ url, directUrl, poolSize: 5, applicationName: "conveyor-test" }));
  return {
    ...database,
    url,
    directUrl,
    db,
    drop: async () => {
      await db.close();
      await database.drop();
    },
  };
}
