// The process' Postgres connections, and the one way the rest of the code reaches Postgres: `db.pool` for every
// statement and transaction (raw SQL in this package's functions; transactions through `inTransaction`),
// `sessionPool(db.pool)` for what keeps state on its connection (LISTEN, a session advisory lock, SET), `db.read` for
// the heavy reads a replica may serve. Prisma owns the schema and the migrations; its client is for tests' fixtures
// only (`@conveyor/db/prisma`), and no process of the service builds one. The pools
// decide what is safe where their URL points: through a pooler in transaction mode (DATABASE_DIRECT_URL set) a
// statement's `name` is dropped, since PgBouncer 1.18 does not carry a prepared statement to the next transaction's
// server connection; straight to Postgres, named statements stay prepared per connection. A URL with several hosts
// connects to the one target_session_attrs asks for (./hosts.ts).
import pg from "pg";
import { StartupError, maskUrl } from "@conveyor/config";
import { databaseUnreachableMessage } from "./errors";
import { HostChooser, NoSuitableHostError } from "./hosts";

export type DatabaseOptions = {
  /** DATABASE_URL: Postgres, or a pooler in front of it when `directUrl` is given; one host or several. */
  url: string;
  /** DATABASE_DIRECT_URL: Postgres itself, for sessions. Giving it says `url` is a pooler in transaction mode. */
  directUrl?: string;
  /** DATABASE_READ_URL: a replica for heavy reads (`db.read`). Default: `url`. */
  readUrl?: string;
  /** The pooler keeps prepared statements across its connections (PgBouncer ≥ 1.21). Default false. */
  poolerPreparedStatements?: boolean;
  /** Connections in the pool (and in the read pool). Default 10. */
  poolSize?: number;
  /** Shown in pg_stat_activity, e.g. "conveyor-api". */
  applicationName?: string;
};

export type Database = {
  /** Every statement and transaction. */
  pool: pg.Pool;
  /** Connections that keep session state (DATABASE_DIRECT_URL, or `pool` when there is no pooler). */
  session: pg.Pool;
  /** Heavy reads a replica may serve (DATABASE_READ_URL, or `pool`). A read of one's own fresh write needs `pool`. */
  read: pg.Pool;
  close(): Promise<void>;
};

const sessions = new WeakMap<pg.Pool, pg.Pool>();

/**
 * The pool for connections that keep session state (LISTEN, session advisory locks, SET outside a transaction):
 * the direct one when `pool` goes through a pooler, else `pool` itself.
 */
export function sessionPool(pool: pg.Pool): pg.Pool {
  return sessions.get(pool) ?? pool;
}

type ClientOptions = { chooser: HostChooser; unnamed: boolean };

/**
 * pg.Client for one of our pools: connects to the host the chooser picks (proving its role when asked to) and
 * drops statement names when the pool goes through a transaction pooler.
 */
function clientClass({ chooser, unnamed }: ClientOptions): typeof pg.Client {
  return class ConveyorClient extends pg.Client {
    override connect(): Promise<void>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<void> | void {
      const done = this.connectToChosen();
      if (!callback) return done;
      done.then(
        // pg's own callback is called with null on success; its type only names the failure.
        () => callback(null as unknown as Error),
        (error: Error) => callback(error),
      );
    }

    private async connectToChosen(): Promise<void> {
      const host = await chooser.choose();
      // pg.Client connects to this.host/this.port (set from its parameters at construction).
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      self.host = self.connectionParameters.host = host.host;
      self.port = self.connectionParameters.port = host.port;
      this.on("error", () => chooser.forget(host));
      try {
        await super.connect();
      } catch (error) {
        chooser.forget(host);
        throw error;
      }
      if (!chooser.checksRole) return;
      const role = await chooser.accepts(this, host).catch((error: Error) => {
        chooser.forget(host);
        throw error;
      });
      if (role) {
        await this.end().catch(() => {});
        throw new NoSuitableHostError(chooser.attrs, [chooser.describe(host, role)]);
      }
    }

    override query(...args: unknown[]): never {
      const [config] = args;
      if (unnamed && typeof config === "object" && config !== null && "name" in config && typeof (config as { submit?: unknown }).submit !== "function") {
        args[0] = { ...config, name: undefined };
      }
      return (super.query as (...a: unknown[]) => never)(...args);
    }
  } as unknown as typeof pg.Client;
}

function newPool(url: string, options: { max: number; applicationName: string; unnamed: boolean }): pg.Pool {
  const chooser = new HostChooser(url);
  const pool = new pg.Pool({
    // The first host's URL carries the credentials, database and parameters; the host itself is chosen per connection.
    connectionString: chooser.hosts[0]!.url,
    Client: clientClass({ chooser, unnamed: options.unnamed }),
    max: options.max,
    application_name: options.applicationName,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (Postgres restart) must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  // Nor a client that is checked out (a transaction between two statements, a LISTEN connection, the dispatcher's
  // connection): the pool removes its listener while the client is lent, and a connection ending then would be an
  // unhandled 'error' event. The statement in progress still fails with the error, and the pool drops the dead
  // client when it is released.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

export function createDatabase(options: DatabaseOptions): Database {
  const applicationName = options.applicationName ?? "conveyor";
  const max = options.poolSize ?? 10;
  const pooled = options.directUrl !== undefined && !options.poolerPreparedStatements;
  const pool = newPool(options.url, { max, applicationName, unnamed: pooled });
  // LISTEN connections (up to three in a worker) and the dispatcher's connection are held for long; a few spare.
  const session = options.directUrl ? newPool(options.directUrl, { max: 6, applicationName: `${applicationName}-session`, unnamed: false }) : pool;
  const read = options.readUrl ? newPool(options.readUrl, { max, applicationName: `${applicationName}-read`, unnamed: pooled }) : pool;
  sessions.set(pool, session);
  let closed: Promise<void> | undefined;
  const end = (extra: pg.Pool) => (extra === pool ? Promise.resolve() : extra.end());
  return {
    pool,
    session,
    read,
    close: () => (closed ??= Promise.all([pool.end(), end(session), end(read)]).then(() => {})),
  };
}

/** Round trip to Postgres; rejects when it is unreachable. */
export async function pingDatabase(pool: pg.Pool): Promise<void> {
  await pool.query("SELECT 1");
}

/**
 * Creates the pool and proves the database is reachable and migrated; throws StartupError with one line
 * (the URL tried, and what to do) otherwise.
 */
export async function connectDatabase(options: DatabaseOptions): Promise<Database> {
  const database = createDatabase(options);
  try {
    const { rows } = await database.pool.query<{ jobs: string | null }>("SELECT to_regclass('public.jobs')::text AS jobs");
    if (!rows[0]?.jobs) {
      throw new StartupError(`The database at ${maskUrl(options.url)} has no Conveyor tables. Run \`npm run db:migrate\` first.`);
    }
    return database;
  } catch (error) {
    await database.close().catch(() => {});
    if (error instanceof StartupError) throw error;
    throw new StartupError(databaseUnreachableMessage(error, options.url) ?? `Cannot use Postgres at ${maskUrl(options.url)}: ${(error as Error).message}`);
  }
}
