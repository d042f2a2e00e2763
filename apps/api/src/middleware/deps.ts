// What the router's guards and the pages they protect use: the endpoints' dependencies, the app's authenticator and
// its rate limits.
import type { RouteDeps } from "../declarations/endpoint";
import type { Authenticator } from "./authenticate";
import type { RateLimits } from "./rate-limit";

export type RouterDeps = RouteDeps & { authenticate: Authenticator; rateLimits: RateLimits };
