// Which Postgres host a connection goes to, for URLs that name several (libpq's multi-host form, which node-postgres
// does not read): the hosts are tried in order and the first whose role fits target_session_attrs is kept until a
// connection to it fails, then they are tried again. A failover is a promotion elsewhere; this finds it.
import pg from "pg";
import { parseDatabaseUrl, type SessionAttrs } from "@conveyor/config";

export type Host = { host: string; port: number; url: string };
type Role = { standby: boolean; readOnly: boolean };

/** How long one host may take to accept a connection while the hosts are being tried. */
const PROBE_TIMEOUT_MS = 3_000;

/** No host of the URL is reachable with the role asked for. Its SQLSTATE (08001) makes it "database unavailable". */
export class NoSuitableHostError extends Error {
  readonly code = "08001";
  constructor(attrs: SessionAttrs, tried: string[]) {
    super(`No Postgres host fits target_session_attrs=${attrs} (${tried.join("; ")})`);
    this.name = "NoSuitableHostError";
  }
}

const ROLE_SQL = "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS read_only";

export async function roleOf(client: pg.ClientBase): Promise<Role> {
  const { rows } = await client.query<{ standby: boolean; read_only: boolean }>(ROLE_SQL);
  return { standby: rows[0]!.standby, readOnly: rows[0]!.read_only };
}

function fits(attrs: SessionAttrs, role: Role): boolean {
  switch (attrs) {
    case "read-write":
      return !role.readOnly;
    case "primary":
      return !role.standby;
    case "read-only":
      return role.readOnly;
    case "standby":
      return role.standby;
    default:
      return true;
  }
}

const describe = (role: Role) => (role.standby ? "a standby" : role.readOnly ? "read-only" : "read-write");

export class HostChooser {
  readonly hosts: Host[];
  readonly attrs: SessionAttrs;
  private current: Host | undefined;
  private probing: Promise<Host> | undefined;

  /** `probeDatabase`: the database the hosts are tried on, when the URL's may not exist yet (migrations create it). */
  constructor(
    url: string,
    private readonly probeDatabase?: string,
  ) {
    const parsed = parseDatabaseUrl(url);
    this.hosts = parsed.hosts;
    this.attrs = parsed.targetSessionAttrs;
  }

  /** Whether each new connection must prove its role (libpq checks it on every connection too). */
  get checksRole(): boolean {
    return this.attrs !== "any" && this.attrs !== "prefer-standby";
  }

  /** The host to connect to: the one that fitted last, or the first that fits now. */
  async choose(): Promise<Host> {
    if (this.hosts.length === 1) return this.hosts[0]!;
    if (this.current) return this.current;
    return (this.probing ??= this.probe().finally(() => (this.probing = undefined)));
  }

  /** A connection to `host` failed or it no longer fits: the next connection tries the hosts again. */
  forget(host: Host): void {
    if (this.current === host) this.current = undefined;
  }

  /** Whether a connected client's server still fits; forgets its host when it does not. */
  async accepts(client: pg.ClientBase, host: Host): Promise<Role | null> {
    const role = await roleOf(client);
    if (fits(this.attrs, role)) return null;
    this.forget(host);
    return role;
  }

  describe(host: Host, role: Role): string {
    return `${host.host}:${host.port} is ${describe(role)}`;
  }

  private probeUrl(host: Host): string {
    if (!this.probeDatabase) return host.url;
    const url = new URL(host.url);
    url.pathname = `/${this.probeDatabase}`;
    return url.toString();
  }

  private async probe(): Promise<Host> {
    const tried: string[] = [];
    const passes: SessionAttrs[] = this.attrs === "prefer-standby" ? ["standby", "any"] : [this.attrs];
    for (const attrs of passes) {
      for (const host of this.hosts) {
        const client = new pg.Client({ connectionString: this.probeUrl(host), connectionTimeoutMillis: PROBE_TIMEOUT_MS });
        client.on("error", () => {});
        try {
          await client.connect();
          const role = attrs === "any" ? null : await roleOf(client);
          if (!role || fits(attrs, role)) return (this.current = host);
          tried.push(this.describe(host, role));
        } catch (error) {
          tried.push(`${host.host}:${host.port}: ${(error as Error).message}`);
        } finally {
          await client.end().catch(() => {});
        }
      }
    }
    throw new NoSuitableHostError(this.attrs, tried);
  }
}

/**
 * The single-host URL of the host `url` would use now (for one-off connections: migrations, checks), trying the
 * hosts on `probeDatabase` when given (the URL's own database may not exist yet).
 */
export async function resolveDatabaseUrl(url: string, probeDatabase?: string): Promise<string> {
  return (await new HostChooser(url, probeDatabase).choose()).url;
}
