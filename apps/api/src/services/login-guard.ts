/**
 * Counts failed password checks per account (SPEC §3: 10 per 15 minutes), whoever sends them. Implemented
 * by the rate limiter; services only report what happened.
 */
export type FailedLoginGuard = {
  /** Throws 429 `rate_limited` when `email` has no failed attempts left. */
  check(email: string): Promise<void>;
  failed(email: string): Promise<void>;
  succeeded(email: string): Promise<void>;
};
