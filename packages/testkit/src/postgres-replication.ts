// A private primary and a streaming replica of it (pg_basebackup -R), each its own cluster on a spare port, for the
// failover and read-replica tests (docs/reference/high-availability.md#high-availability). The shared server on 5432 is never touched.
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { asPostgres, asPostgresAsync, postgresUser } from "./postgres-server";
import { freePort } from "./redis-server";
import { waitFor } from "./wait";

export type ServerHandle = {
  port: number;
  dataDir: string;
  /** URL of database `name` on this server alone. */
  url(name: string): string;
  /** Stops at once, like a crash or a pulled plug (`-m immediate`); the event loop runs on meanwhile (load goes on). */
  stop(): Promise<void>;
};

export type ReplicatedPostgres = {
  primary: ServerHandle;
  replica: ServerHandle;
  /** `postgresql://…@primary,replica/name?target_session_attrs=read-write`: what a failover deployment configures. */
  failoverUrl(name: string): string;
  /** Makes the replica the primary (`pg_ctl promote`, waiting until it accepts writes). */
  promote(): Promise<void>;
  /** Stops the replica applying WAL (`pg_wal_replay_pause()`), or lets it go on. */
  pauseReplay(paused: boolean): Promise<void>;
  /** Resolves when the replica has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  destroy(): Promise<void>;
};

export type ReplicationOptions = {
  /** Commits wait for the replica to flush the WAL (synchronous_standby_names = '*'). Default false. */
  synchronous?: boolean;
};

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on("error", () => {});
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function startReplicatedPostgres(options: ReplicationOptions = {}): Promise<ReplicatedPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-pg-pair-"));
  const user = postgresUser();
  if (user) chownSync(dir, user.uid, user.gid);
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const handle = (port: number, name: string): ServerHandle => {
    const dataDir = path.join(dir, name);
    return {
      port,
      dataDir,
      url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
      async stop() {
        await asPostgresAsync("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => {
          // already stopped
        });
      },
    };
  };
  const primary = handle(primaryPort, "primary");
  const replica = handle(replicaPort, "replica");
  const start = (server: ServerHandle, settings: string[]) =>
    asPostgres("pg_ctl", [
      "-D",
      server.dataDir,
      "-l",
      path.join(dir, `${path.basename(server.dataDir)}.log`),
      "-w",
      "-o",
      [`-p ${server.port}`, `-k ${dir}`, "-c listen_addresses=127.0.0.1", "-c fsync=off", "-c wal_level=replica", "-c max_wal_senders=5", ...settings].join(
        " ",
      ),
      "start",
    ]);

  try {
    asPostgres("initdb", ["-D", primary.dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
    start(primary, options.synchronous ? ["-c synchronous_standby_names='*'"] : []);
    asPostgres("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", replica.dataDir, "-R", "-X", "stream"]);
    start(replica, ["-c hot_standby=on"]);
    await waitFor(
      async () => {
        const rows = await query<{ state: string; sync_state: string }>(primary.url("postgres"), "SELECT state, sync_state FROM pg_stat_replication");
        return rows.some((row) => row.state === "streaming" && (!options.synchronous || row.sync_state === "sync"));
      },
      "the replica to stream from the primary",
      30_000,
    );
  } catch (error) {
    await Promise.all([primary.stop(), replica.stop()]);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    primary,
    replica,
    failoverUrl: (name) => `postgresql://postgres@127.0.0.1:${primaryPort},127.0.0.1:${replicaPort}/${name}?target_session_attrs=read-write`,
    async promote() {
      await asPostgresAsync("pg_ctl", ["-D", replica.dataDir, "-w", "promote"]);
    },
    async pauseReplay(paused) {
      await query(replica.url("postgres"), paused ? "SELECT pg_wal_replay_pause()" : "SELECT pg_wal_replay_resume()");
    },
    async caughtUp() {
      const [{ lsn }] = (await query<{ lsn: string }>(primary.url("postgres"), "SELECT pg_current_wal_lsn()::text AS lsn")) as [{ lsn: string }];
      await waitFor(
        async () => (await query<{ ok: boolean }>(replica.url("postgres"), `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS ok`))[0]?.ok,
        "the replica to replay the primary's WAL",
        30_000,
      );
    },
    async destroy() {
      await Promise.all([primary.stop(), replica.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
