/**
 * Counts password checks per account (docs/reference/tenants.md#authentication: 10 failures per 15 minutes), whoever sends them. A check is
 * counted before it is made, atomically, so parallel guesses cannot all slip under the limit; a right password
 * forgets the count. Implemented by the rate limiter; services only report what happens.
 */
export type FailedLoginGuard = {
  /** Counts a password check for `email`; throws 429 `rate_limited` when the account has no attempts left. */
  attempt(email: string): Promise<void>;
  /** The password was right: the account's failures are forgotten. */
  succeeded(email: string): Promise<void>;
};
