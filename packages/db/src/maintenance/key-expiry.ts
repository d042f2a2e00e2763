// Maintenance the leader runs on a timer (apps/worker/src/maintenance/key-expiry.ts): keys past their window are
// forgotten, a bounded batch of each per round, so the tables stay the size of the windows.
import type pg from "pg";
import { deleteExpiredDedupeKeys } from "../flow/flow-control";
import { deleteExpiredIdempotencyKeys } from "../jobs/job-runtime";

/** Forgets idempotency keys past their 24 hours and dedupe keys past the longest window, up to `limit` of each. */
export async function expireKeys(pool: pg.Pool, limit = 1000): Promise<{ idempotencyKeys: number; dedupeKeys: number }> {
  const idempotencyKeys = await deleteExpiredIdempotencyKeys(pool, limit);
  const dedupeKeys = await deleteExpiredDedupeKeys(pool, limit);
  return { idempotencyKeys, dedupeKeys };
}
