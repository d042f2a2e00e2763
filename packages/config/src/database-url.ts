// Postgres connection URLs as libpq reads them, including the multi-host form a failover deployment uses
// (`postgresql://user@h1:5432,h2:5432/db?target_session_attrs=read-write`), which node-postgres and WHATWG URL
// parsing both refuse. Each host becomes a single-host URL node-postgres can use; the hosts are tried in order.
import Joi from "joi";

/** libpq's target_session_attrs values this service honours. */
export const SESSION_ATTRS = ["any", "read-write", "primary", "read-only", "standby", "prefer-standby"] as const;
export type SessionAttrs = (typeof SESSION_ATTRS)[number];

export type DatabaseUrl = {
  /** One single-host URL per host, in the order given, without target_session_attrs. */
  hosts: { host: string; port: number; url: string }[];
  /** What a host must be to be used (libpq's target_session_attrs; default `any`). */
  targetSessionAttrs: SessionAttrs;
};

const SHAPE = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/i;

/** Splits `url`'s hosts; throws with a sentence when it is not a postgres URL libpq would accept. */
export function parseDatabaseUrl(url: string): DatabaseUrl {
  const match = SHAPE.exec(url.trim());
  if (!match) throw new Error("must be a postgres:// or postgresql:// URL");
  const [, scheme, userinfo = "", hostList = "", rest = ""] = match;
  let targetSessionAttrs: SessionAttrs = "any";
  const [pathname = "", query = ""] = rest.split("?", 2) as [string, string?];
  const params = new URLSearchParams(query.split("#")[0]);
  const attrs = params.get("target_session_attrs");
  if (attrs !== null) {
    if (!(SESSION_ATTRS as readonly string[]).includes(attrs)) throw new Error(`has target_session_attrs=${attrs}; use one of ${SESSION_ATTRS.join(", ")}`);
    targetSessionAttrs = attrs as SessionAttrs;
    params.delete("target_session_attrs");
  }
  const tail = pathname + (params.size ? `?${params.toString()}` : "");
  const entries = hostList.split(",");
  if (entries.some((entry) => entry.trim() === "") && entries.length > 1) throw new Error("has an empty host in its host list");
  const hosts = entries.map((entry) => {
    const hostPort = /^(\[[0-9a-f:.]+\]|[^:[\]]*)(?::(\d{1,5}))?$/i.exec(entry.trim());
    if (!hostPort) throw new Error(`has a host that is not host[:port]: "${entry}"`);
    const host = hostPort[1] || "localhost";
    const port = hostPort[2] ? Number(hostPort[2]) : 5432;
    if (port < 1 || port > 65_535) throw new Error(`has a port out of range: ${port}`);
    const single = `${scheme}${userinfo}${host}:${port}${tail}`;
    try {
      new URL(single);
    } catch {
      throw new Error("must be a valid URI");
    }
    return { host: host.replace(/^\[|\]$/g, ""), port, url: single };
  });
  return { hosts, targetSessionAttrs };
}

/** The URL with its password replaced, safe to log; works on multi-host URLs too. */
export function maskDatabaseUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*:)[^@/]*@/i, "$1***@");
}

/** A DATABASE_* setting: a postgres URL with one host or several (`h1:5432,h2:5432`). */
export function databaseUrl(): Joi.StringSchema<string> {
  return Joi.string().custom((value: string, helpers) => {
    try {
      parseDatabaseUrl(value);
      return value;
    } catch (error) {
      return helpers.message({ custom: (error as Error).message });
    }
  });
}
