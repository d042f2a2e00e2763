// http(s) agents that refuse a forbidden literal IP before any socket exists. Host names are judged by the
// `lookup` the guard gives them; literal IPs skip `lookup` inside net.connect, hence this second gate.
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";

/** Why the socket may not be opened to `host` (a literal IP), or null. */
export type LiteralRefusal = (host: string) => Error | null;

type Callback = (err: Error | null, stream: Duplex) => void;

const hostOf = (options: http.ClientRequestArgs) => (options.host ?? options.hostname ?? "").replace(/^\[|\]$/g, "");

export class GuardedHttpAgent extends http.Agent {
  constructor(
    private readonly refuse: LiteralRefusal,
    options: http.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: Callback): Duplex | null | undefined {
    const refusal = this.refuse(hostOf(options));
    // The agent accepts an error through the callback; returning nothing means "no socket".
    if (refusal) return void callback?.(refusal, undefined as unknown as Duplex);
    return super.createConnection(options, callback);
  }
}

export class GuardedHttpsAgent extends https.Agent {
  constructor(
    private readonly refuse: LiteralRefusal,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: Callback): Duplex | null | undefined {
    const refusal = this.refuse(hostOf(options));
    if (refusal) return void callback?.(refusal, undefined as unknown as Duplex);
    return super.createConnection(options, callback);
  }
}
