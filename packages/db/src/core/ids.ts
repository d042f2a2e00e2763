import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

/**
 * Random bytes for ids, filled 256 ids at a time: uuid asks the web crypto API for 16 bytes per id, which cost more
 * than the rest of making it (every created job and batch item takes one).
 */
const pool = new Uint8Array(16 * 256);
let used = pool.length;

function randomBytes16(): Uint8Array {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 16;
  return pool.subarray(used - 16, used);
}

/** This process's last id's milliseconds and counter: ids made in one millisecond still sort in the order made. */
const last = { msecs: -Infinity, seq: 0 };

/** A new UUID v7: time-ordered, so primary-key order is creation order and inserts stay index-local. */
export function newId(): string {
  const random = randomBytes16();
  const now = Date.now();
  // As uuid does for v7() without options (RFC 9562 §6.2, method 1): a new millisecond starts the counter at a random
  // 31-bit value; within one it counts up, and an overflow borrows the next millisecond.
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs++;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` can be an id at all; a malformed id is answered like an unknown one (404). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
