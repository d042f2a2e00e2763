import { v7 } from "uuid";

/** A new UUID v7: time-ordered, so primary-key order is creation order and inserts stay index-local. */
export function newId(): string {
  return v7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` can be an id at all; a malformed id is answered like an unknown one (404). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
