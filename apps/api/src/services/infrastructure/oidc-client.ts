// Talking to an organization's OpenID provider (docs/reference/tenants.md#audit-log) with openid-client, a maintained relying-party library:
// discovery, the token exchange and every check of the ID token (signature from the provider's JWKS, iss, aud, exp,
// nonce) are its work, never ours. Every request it makes goes through the SSRF guard (@conveyor/net), so an owner
// cannot point the API at an internal address, and an http:// provider is accepted only with SSO_ALLOW_HTTP.
import { urlPolicy } from "@conveyor/config";
import { urlRefusal, type UrlPolicy } from "@conveyor/contracts";
import { createSsrfGuard, guardedRequest, type SsrfGuard } from "@conveyor/net";
import * as oidc from "openid-client";
import type { ApiConfig } from "../../env";

/** The most of a provider's answer (discovery document, JWKS, token, userinfo) read into memory. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Seconds one request to a provider may take. */
const TIMEOUT_SECONDS = 10;

export type OidcSettings = Pick<ApiConfig, "SSO_ALLOW_HTTP" | "ALLOW_PRIVATE_NETWORK" | "WEBHOOK_ALLOW_HTTP">;

/** Where a provider may be: https (http with SSO_ALLOW_HTTP), public addresses (any with ALLOW_PRIVATE_NETWORK). */
export function providerPolicy(config: OidcSettings): UrlPolicy {
  return { ...urlPolicy(config), allowHttp: config.SSO_ALLOW_HTTP };
}

/** A fetch for openid-client whose every connection is judged by the SSRF guard. Redirects are never followed. */
export function guardedFetch(guard: SsrfGuard, policy: UrlPolicy): oidc.CustomFetch {
  return async (url, options) => {
    const refusal = urlRefusal(url, policy);
    if (refusal) throw new TypeError(`${new URL(url).host} refused: the address ${refusal}`);
    const method = options.method.toUpperCase();
    if (method !== "GET" && method !== "POST") throw new TypeError(`${method} is not a request an OpenID provider is sent here`);
    const body = options.body === undefined || options.body === null ? undefined : String(options.body as string | URLSearchParams);
    const signal = options.signal ?? AbortSignal.timeout(TIMEOUT_SECONDS * 1000);
    const answer = await guardedRequest(guard, {
      url: new URL(url),
      method,
      headers: options.headers,
      body,
      signal,
      maxBodyBytes: MAX_BODY_BYTES,
      overflow: "refuse",
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
    }
    const noBody = answer.status === 204 || answer.status === 304;
    return new Response(noBody ? null : new Uint8Array(answer.body), { status: answer.status, headers });
  };
}

/** openid-client's settings for one provider: the guarded fetch, the time limit, and http only where allowed. */
function prepare(configuration: oidc.Configuration, config: OidcSettings): oidc.Configuration {
  const policy = providerPolicy(config);
  configuration[oidc.customFetch] = guardedFetch(createSsrfGuard({ policy }), policy);
  configuration.timeout = TIMEOUT_SECONDS;
  if (config.SSO_ALLOW_HTTP) oidc.allowInsecureRequests(configuration);
  // ID tokens from the token endpoint are verified against the provider's JWKS too (docs/reference/tenants.md#audit-log), not only trusted
  // for having come over TLS, which is all OpenID Connect Core requires of a code flow.
  oidc.enableNonRepudiationChecks(configuration);
  return configuration;
}

/** Discovers the provider of `issuer` (through the guard); openid-client checks the document names this issuer. */
export async function discoverProvider(issuer: string, client: { id: string; secret: string }, config: OidcSettings): Promise<oidc.Configuration> {
  const policy = providerPolicy(config);
  const configuration = await oidc.discovery(new URL(issuer), client.id, client.secret, undefined, {
    [oidc.customFetch]: guardedFetch(createSsrfGuard({ policy }), policy),
    timeout: TIMEOUT_SECONDS,
    execute: config.SSO_ALLOW_HTTP ? [oidc.allowInsecureRequests] : [],
  });
  return prepare(configuration, config);
}

/** The provider as it was discovered when its settings were saved: no request is made to build it. */
export function storedProvider(metadata: Record<string, unknown>, client: { id: string; secret: string }, config: OidcSettings): oidc.Configuration {
  return prepare(new oidc.Configuration(metadata as oidc.ServerMetadata, client.id, client.secret), config);
}

/** Reads the provider's JWKS (through the guard): at least one key that can sign. Throws naming what is wrong. */
export async function checkJwks(configuration: oidc.Configuration): Promise<void> {
  const uri = configuration.serverMetadata().jwks_uri;
  if (!uri) throw new Error("the discovery document has no jwks_uri");
  const fetch = configuration[oidc.customFetch]!;
  const res = await fetch(uri, { method: "GET", headers: { accept: "application/json, application/jwk-set+json" }, redirect: "manual", body: undefined });
  if (res.status !== 200) throw new Error(`${uri} answered ${res.status}`);
  let jwks: { keys?: { kty?: unknown; use?: unknown }[] };
  try {
    jwks = (await res.json()) as typeof jwks;
  } catch {
    throw new Error(`${uri} is not JSON`);
  }
  if (!Array.isArray(jwks.keys)) throw new Error(`${uri} has no "keys" array`);
  if (!jwks.keys.some((key) => typeof key.kty === "string" && key.use !== "enc")) throw new Error(`${uri} has no key that can sign ID tokens`);
}

export { oidc };
