// The one registry of endpoint declarations (docs/reference/http.md#conventions): endpoints/index.ts makes it from
// the list of every endpoint, and whatever reads the declarations — the router, the OpenAPI document — is handed it,
// so nothing above the declarations is imported to read them.
import type { ApiConfig } from "../env";
import type { Endpoint } from "./endpoint";

export type EndpointRegistry = {
  /** Every endpoint, in the order the reference lists them (and the router matches them). */
  readonly all: readonly Endpoint[];
  /** The endpoints this deployment serves (some depend on configuration, e.g. signup with ALLOW_SIGNUP=false). */
  served(config: ApiConfig): readonly Endpoint[];
};

export function endpointRegistry(all: readonly Endpoint[]): EndpointRegistry {
  return { all, served: (config) => all.filter((e) => e.enabled?.(config) ?? true) };
}
