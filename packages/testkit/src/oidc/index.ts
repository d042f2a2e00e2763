// OpenID providers for the single sign-on tests (docs/reference/tenants.md#audit-log), both speaking the real wire format:
// - startOidcProvider: the `oidc-provider` package, a certified OpenID provider, in a process of its own, with its
//   development login form (input[name=login], input[name=password], then a consent page with one submit button).
// - startForgingProvider: a provider the test controls, whose token endpoint hands out the ID token a forgery needs
//   (another audience, issuer or nonce, expired, unsigned, signed by another key…), to prove each is refused.
import { spawn } from "node:child_process";
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { freePort } from "../redis-server";

export type OidcClient = { client_id: string; client_secret: string; redirect_uris: string[] };

export type OidcProvider = { issuer: string; output(): string; stop(): Promise<void> };

/** Starts the real provider with `clients`; its accounts are whatever e-mail is typed at its login form. */
export async function startOidcProvider(clients: OidcClient[]): Promise<OidcProvider> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, "provider-process.mjs")], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", OIDC_PROVIDER_CONFIG: JSON.stringify({ port, clients }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!output.includes("oidc-provider listening on")) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`oidc-provider did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    issuer: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** What the forging provider's next token answer holds. */
export type Forgery = {
  /** Claims merged over the honest ones (iss, aud, sub, nonce, iat, exp, email, email_verified); undefined deletes. */
  claims?: Record<string, unknown>;
  /** "own" (default): the key its JWKS publishes; "other": a key it does not publish; "none": alg none, no signature. */
  signWith?: "own" | "other" | "none";
  /** What its userinfo endpoint answers (default: the ID token's email and email_verified). */
  userinfo?: Record<string, unknown>;
};

export type ForgingProvider = {
  issuer: string;
  /** The forgery of the next token answers (reset to honest with `undefined`). */
  forge(forgery: Forgery | undefined): void;
  /** The e-mail the next sign-ins are for (default a@example.test). */
  signInAs(email: string): void;
  /** Codes it issued, oldest first, and how many times each was redeemed. */
  codes: { code: string; redeemed: number }[];
  close(): Promise<void>;
};

type Pending = { state: string; nonce: string; challenge: string; redirectUri: string; email: string };

const b64url = (value: Buffer | string) => Buffer.from(value).toString("base64url");

function jwt(claims: Record<string, unknown>, key: KeyObject | null, kid: string): string {
  const header = key ? { alg: "RS256", typ: "JWT", kid } : { alg: "none", typ: "JWT" };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${key ? b64url(sign("sha256", Buffer.from(input), key)) : ""}`;
}

/**
 * A provider for one client (`clientId`, `clientSecret`) whose authorization endpoint signs in at once (no form) and
 * whose token endpoint answers with the forgery set by forge(). Codes are single use, and PKCE is checked.
 */
export async function startForgingProvider(client: { clientId: string; clientSecret: string }): Promise<ForgingProvider> {
  const own = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const other = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = "forging-provider-key";
  const pending = new Map<string, Pending>();
  const codes: { code: string; redeemed: number }[] = [];
  let forgery: Forgery | undefined;
  let email = "a@example.test";
  let issuer = "";

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/.well-known/openid-configuration") {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/userinfo`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["client_secret_post"],
        scopes_supported: ["openid", "email", "profile"],
      });
    }
    if (req.method === "GET" && url.pathname === "/jwks") {
      return json(200, { keys: [{ ...own.publicKey.export({ format: "jwk" }), kid, use: "sig", alg: "RS256" }] });
    }
    if (req.method === "GET" && url.pathname === "/authorize") {
      const q = url.searchParams;
      if (q.get("client_id") !== client.clientId || q.get("code_challenge_method") !== "S256") return json(400, { error: "invalid_request" });
      const code = randomBytes(16).toString("base64url");
      pending.set(code, {
        state: q.get("state") ?? "",
        nonce: q.get("nonce") ?? "",
        challenge: q.get("code_challenge") ?? "",
        redirectUri: q.get("redirect_uri") ?? "",
        email,
      });
      codes.push({ code, redeemed: 0 });
      const back = new URL(q.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state") ?? "");
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/token") {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        if (form.get("client_id") !== client.clientId || form.get("client_secret") !== client.clientSecret) return json(401, { error: "invalid_client" });
        const code = form.get("code") ?? "";
        const issued = codes.find((c) => c.code === code);
        const grant = pending.get(code);
        if (issued) issued.redeemed++;
        if (!grant || !issued || issued.redeemed > 1) return json(400, { error: "invalid_grant", error_description: "unknown, expired or used code" });
        const verifier = form.get("code_verifier") ?? "";
        if (createHash("sha256").update(verifier).digest("base64url") !== grant.challenge || form.get("redirect_uri") !== grant.redirectUri) {
          return json(400, { error: "invalid_grant", error_description: "PKCE or redirect_uri mismatch" });
        }
        const now = Math.floor(Date.now() / 1000);
        const claims: Record<string, unknown> = {
          iss: issuer,
          aud: client.clientId,
          sub: `sub-${grant.email}`,
          nonce: grant.nonce,
          iat: now,
          exp: now + 300,
          email: grant.email,
          email_verified: true,
          ...forgery?.claims,
        };
        for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
        const key = forgery?.signWith === "none" ? null : forgery?.signWith === "other" ? other.privateKey : own.privateKey;
        const accessToken = `at-${randomBytes(12).toString("hex")}`;
        userinfoByToken.set(accessToken, forgery?.userinfo ?? { sub: claims.sub, email: claims.email, email_verified: claims.email_verified });
        json(200, { access_token: accessToken, token_type: "Bearer", expires_in: 300, id_token: jwt(claims, key, kid) });
      });
      return;
    }
    if (req.method === "GET" && url.pathname === "/userinfo") {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      const info = userinfoByToken.get(token);
      return info ? json(200, info) : json(401, { error: "invalid_token" });
    }
    json(404, { error: "not_found" });
  });
  const userinfoByToken = new Map<string, Record<string, unknown>>();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    forge: (next) => (forgery = next),
    signInAs: (next) => (email = next),
    codes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
