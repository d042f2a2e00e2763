// The SSRF guard shared by every handler that fetches a user-supplied URL (webhook, compress_image).
// The URL is judged first (scheme, credentials, literal IPs, internal names: the same policy the API applies
// at enqueue, re-applied because a job may predate a policy change). Then the agents' socket `lookup`
// resolves the host, judges EVERY address and hands the socket only addresses it judged, so the address
// checked is the address connected to: a second, rebound DNS answer is never consulted.
// guardedRequest keeps connections alive without giving that up: it resolves and judges the host for every request,
// then uses the keep-alive agent of exactly the addresses it judged (pooledAgent), so a reused socket is always
// connected to an address this request's own resolution answered and the guard judged.
import dns from "node:dns";
import type http from "node:http";
import type https from "node:https";
import net from "node:net";
import { forbiddenAddressReason, PermanentJobError, urlRefusal, type UrlPolicy } from "@conveyor/contracts";
import { GuardedHttpAgent, GuardedHttpsAgent } from "./guarded-agents";

/** Resolves a host name to every address it has (A and AAAA). */
export type Resolver = (hostname: string) => Promise<string[]>;

export type SsrfGuardOptions = {
  policy: UrlPolicy;
  /** Default: the system resolver (`dns.lookup` with `all: true`). Tests inject one to play DNS tricks. */
  resolve?: Resolver;
  /** Extra trusted CA certificates (PEM) for https targets. Default: Node's bundled roots only. */
  ca?: string | Buffer;
  /** Keep connections alive per resolved address set (pooledAgent). Default true; false opens one per request. */
  keepAlive?: boolean;
};

/**
 * What a handler factory may take besides its deps, for tests only: a resolver and a test CA. Neither can
 * loosen the policy (every answer is still judged), and the worker's registry never passes them.
 */
export type NetOptions = Pick<SsrfGuardOptions, "resolve" | "ca">;

/** Heard with a host name and the addresses the guard checked and handed to the socket. */
export type ResolvedListener = (hostname: string, addresses: string[]) => void;

export type SsrfGuard = {
  /** The parsed URL, or a PermanentJobError naming why the policy refuses it. */
  checkUrl(raw: string): URL;
  /** A socket `lookup` that refuses forbidden addresses and answers only the addresses it checked. */
  lookup(onResolved?: ResolvedListener): net.LookupFunction;
  /**
   * Agents whose sockets resolve through `lookup` and refuse forbidden literal IPs. keepAlive is off, so
   * every request opens a fresh socket and is judged again.
   */
  agents(onResolved?: ResolvedListener): { httpAgent: http.Agent; httpsAgent: https.Agent };
  /**
   * Resolves and judges `url`'s host for one request, then answers the keep-alive agent of the scheme and the exact
   * set of addresses judged (created on first use; at most POOLED_AGENTS, the least recently used retired). Its
   * sockets connect only to those addresses. Rejects like `lookup` (ForbiddenTargetError, ENOTFOUND).
   */
  pooledAgent(url: URL, onResolved?: ResolvedListener): Promise<http.Agent>;
  /** Closes every pooled connection (at shutdown, and in tests). */
  closePooled(): void;
};

/** Keep-alive agents one guard keeps (each is one set of resolved addresses); the oldest is retired past this. */
export const POOLED_AGENTS = 256;
/** Idle keep-alive sockets close after this: under Node's and most servers' 5 s, so a reuse rarely meets a close. */
const IDLE_SOCKET_MS = 4_000;

/** A connection the guard refused; handlers turn it into a permanent failure. */
export class ForbiddenTargetError extends Error {
  override name = "ForbiddenTargetError";
  readonly code = "ERR_SSRF_FORBIDDEN";
}

const systemResolve: Resolver = async (hostname) => (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export function createSsrfGuard(options: SsrfGuardOptions): SsrfGuard {
  const { policy } = options;
  const resolve = options.resolve ?? systemResolve;
  const reasonFor = (address: string) => (policy.allowPrivateNetwork ? null : forbiddenAddressReason(address));

  /** The addresses of `hostname`, every one judged; rejects if any is forbidden. */
  const judged = async (hostname: string): Promise<string[]> => {
    const addresses = await resolve(hostname);
    const refused = addresses.map(reasonFor).find((reason) => reason !== null);
    if (refused) throw new ForbiddenTargetError(`${hostname} resolves to a forbidden address (${refused})`);
    return addresses;
  };

  /** A socket `lookup` answering from `answer(hostname)`, filtered to the family the socket asks for. */
  const lookupFrom =
    (answer: (hostname: string) => Promise<string[]>, onResolved?: ResolvedListener): net.LookupFunction =>
    (hostname, lookupOptions, callback) => {
      const family = typeof lookupOptions === "number" ? lookupOptions : lookupOptions?.family;
      const wanted = family === "IPv4" ? 4 : family === "IPv6" ? 6 : (family ?? 0);
      const all = typeof lookupOptions === "object" && lookupOptions?.all === true;
      answer(hostname).then(
        (addresses) => {
          const usable = addresses
            .map((address) => ({ address, family: net.isIP(address) }))
            .filter((entry) => entry.family !== 0 && (wanted === 0 || entry.family === wanted));
          if (usable.length === 0) return callback(notFound(hostname), "", 0);
          onResolved?.(
            hostname,
            usable.map((entry) => entry.address),
          );
          if (all) return callback(null, usable);
          callback(null, usable[0]!.address, usable[0]!.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, "", 0),
      );
    };
  const lookup = (onResolved?: ResolvedListener) => lookupFrom(judged, onResolved);

  // A literal IP host never reaches `lookup` (net connects to it directly), so the agents ask this instead.
  const literalRefusal = (host: string): ForbiddenTargetError | null => {
    const reason = net.isIP(host) === 0 ? null : reasonFor(host);
    return reason ? new ForbiddenTargetError(reason) : null;
  };

  const agents = (onResolved?: ResolvedListener) => {
    const common = { keepAlive: false, lookup: lookup(onResolved) };
    return {
      httpAgent: new GuardedHttpAgent(literalRefusal, common),
      httpsAgent: new GuardedHttpsAgent(literalRefusal, { ...common, ...(options.ca ? { ca: options.ca } : {}) }),
    };
  };

  // Least recently used first (a Map keeps insertion order; a use moves the entry to the end).
  const pooled = new Map<string, http.Agent>();
  const retire = (agent: http.Agent) => {
    // Idle sockets close now; sockets still in a request close when it ends (the agent is no longer used, and its
    // idle timeout closes whatever it gets back).
    for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  };

  return {
    checkUrl(raw) {
      const refusal = urlRefusal(raw, policy);
      if (refusal) throw new PermanentJobError(`URL refused: it ${refusal}`);
      return new URL(raw);
    },
    lookup,
    agents,
    async pooledAgent(url, onResolved) {
      const secure = url.protocol === "https:";
      // Without keep-alive: a fresh agent whose socket resolves and judges at connect time, one per request.
      if (options.keepAlive === false) return agents(onResolved)[secure ? "httpsAgent" : "httpAgent"];
      const host = url.hostname.replace(/^\[|\]$/g, "");
      const refusal = literalRefusal(host);
      if (refusal) throw refusal;
      const literal = net.isIP(host) !== 0;
      const addresses = literal ? [host] : (await judged(host)).filter((address) => net.isIP(address) !== 0);
      if (addresses.length === 0) throw notFound(host);
      // A literal IP is not resolved, so there is nothing to hear (as with `lookup`, which Node skips for one).
      if (!literal) onResolved?.(host, addresses);
      const key = `${secure ? "https" : "http"} ${[...addresses].sort().join(",")}`;
      let agent = pooled.get(key);
      if (agent) {
        pooled.delete(key);
      } else {
        // Its sockets resolve to exactly the addresses judged above, whatever DNS says later.
        const common = { keepAlive: true, scheduling: "lifo" as const, timeout: IDLE_SOCKET_MS, lookup: lookupFrom(() => Promise.resolve(addresses)) };
        agent = secure
          ? new GuardedHttpsAgent(literalRefusal, { ...common, ...(options.ca ? { ca: options.ca } : {}) })
          : new GuardedHttpAgent(literalRefusal, common);
        if (pooled.size >= POOLED_AGENTS) {
          const [oldest, retired] = pooled.entries().next().value!;
          pooled.delete(oldest);
          retire(retired);
        }
      }
      pooled.set(key, agent);
      return agent;
    },
    closePooled() {
      for (const agent of pooled.values()) agent.destroy();
      pooled.clear();
    },
  };
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname });
}
