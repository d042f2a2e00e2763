// A Postgres server of the benchmark's own, for figures that need the whole server to itself: pg_stat_statements
// loaded, and the CPU time its processes spend read from /proc (the machine's shared Postgres serves other work).
// Same major version and the same settings that matter as the machine's (fsync and synchronous_commit on,
// shared_buffers 128 MB, autovacuum off as on these machines); started in a temporary folder, removed after.
import { execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "@conveyor/testkit";

export type PrivatePostgres = {
  /** A URL of the server (database `postgres`). */
  url: string;
  /** CPU time (user + system) spent so far by the server's processes, those that have exited included, in microseconds. */
  cpuMicros(): number;
  /** Forgets what pg_stat_statements has counted. */
  resetStatements(): Promise<void>;
  /** Total execution time per statement (the first 300 characters of its text), largest first. */
  statements(limit?: number): Promise<{ query: string; calls: number; rows: number; totalMs: number; plans: number; planMs: number }[]>;
  /** Per table of database `database`: rows inserted, updated (of them HOT), deleted, and its index count. */
  tableWrites(database: string): Promise<{ table: string; ins: number; upd: number; hot: number; del: number; indexes: number }[]>;
  stop(): void;
};

function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error("no Postgres server binaries under /usr/lib/postgresql");
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

/** Runs a server binary as the `postgres` user when this process is root (initdb refuses root). */
function asPostgres(binary: string, args: string[]): void {
  const command = path.join(binDir(), binary);
  if (process.getuid?.() === 0) execFileSync("runuser", ["-u", "postgres", "--", command, ...args], { stdio: "pipe" });
  else execFileSync(command, args, { stdio: "pipe" });
}

export type PrivatePostgresOptions = {
  /** The port to listen on; default a free one. */
  port?: number;
  /** Autovacuum on (the machine's servers run with it off); default off. */
  autovacuum?: boolean;
  /** More postgresql.conf lines, e.g. `max_wal_size = '4GB'` for a bulk load. */
  settings?: string[];
};

export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-bench-pg-"));
  const data = path.join(dir, "data");
  if (process.getuid?.() === 0)
    chownSync(dir, Number(execFileSync("id", ["-u", "postgres"]).toString()), Number(execFileSync("id", ["-g", "postgres"]).toString()));
  asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = options.port ?? (await freePort());
  writeFileSync(
    path.join(data, "postgresql.auto.conf"),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "shared_buffers = 128MB",
      `autovacuum = ${options.autovacuum ? "on" : "off"}`,
      "max_connections = 200",
      "shared_preload_libraries = 'pg_stat_statements'",
      "pg_stat_statements.track = all",
      ...(options.settings ?? []),
      "",
    ].join("\n"),
  );
  asPostgres("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "start"]);
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  await admin((c) => c.query("CREATE EXTENSION pg_stat_statements"));
  const postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString()) || 100;

  return {
    url,
    cpuMicros() {
      let total = 0;
      for (const entry of readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
          // Fields after the command name (which may contain spaces): state is field 3, ppid 4, utime 14, stime 15.
          const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          const pid = Number(entry);
          if (pid !== postmaster && Number(fields[1]) !== postmaster) continue;
          total += Number(fields[11]) + Number(fields[12]);
          // The postmaster's cutime and cstime: what its children that have exited (ended connections) spent.
          if (pid === postmaster) total += Number(fields[13]) + Number(fields[14]);
        } catch {
          // The process ended meanwhile.
        }
      }
      return (total / ticks) * 1e6;
    },
    resetStatements: () => admin((c) => c.query("SELECT pg_stat_statements_reset()")).then(() => undefined),
    statements: (limit = 12) =>
      admin(async (c) => {
        // plans and total_plan_time count only with pg_stat_statements.track_planning on (a setting).
        const { rows } = await c.query<{ query: string; calls: string; rows: string; total: number; plans: string; plan: number }>(
          `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 300) AS query, calls, rows, total_exec_time AS total, plans, total_plan_time AS plan
             FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT $1`,
          [limit],
        );
        return rows.map((r) => ({
          query: r.query,
          calls: Number(r.calls),
          rows: Number(r.rows),
          totalMs: r.total,
          plans: Number(r.plans),
          planMs: r.plan,
        }));
      }),
    tableWrites: async (database) => {
      const client = new pg.Client({ connectionString: url.replace(/\/postgres$/, `/${database}`) });
      await client.connect();
      try {
        // The counters reach pg_stat_user_tables when a backend reports them: at most every second while it works, and
        // an idle backend's last counts within 10 s (PGSTAT_IDLE_INTERVAL).
        await new Promise((resolve) => setTimeout(resolve, 11_000));
        await client.query("SELECT pg_stat_clear_snapshot()");
        const { rows } = await client.query<{ table: string; ins: string; upd: string; hot: string; del: string; indexes: string }>(
          `SELECT t.relname AS table, t.n_tup_ins AS ins, t.n_tup_upd AS upd, t.n_tup_hot_upd AS hot, t.n_tup_del AS del,
                  (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid) AS indexes
             FROM pg_stat_user_tables t WHERE t.n_tup_ins + t.n_tup_upd + t.n_tup_del > 0 ORDER BY t.relname`,
        );
        return rows.map((r) => ({
          table: r.table,
          ins: Number(r.ins),
          upd: Number(r.upd),
          hot: Number(r.hot),
          del: Number(r.del),
          indexes: Number(r.indexes),
        }));
      } finally {
        await client.end();
      }
    },
    stop() {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
