// The API's refusal of a schedule, in words at its fields: every detail (not only the first), a payload field named
// as the person wrote it (“to” is required) instead of by its path in the request (job.payload.to).
import { ApiError } from "../api";
import type { FormErrors } from "../ui/form";

/** `items.0.quantity` → “items” item 1 “quantity”. */
export function pathInWords(path: string): string {
  return path
    .split(".")
    .map((segment) => (/^\d+$/.test(segment) ? `item ${Number(segment) + 1}` : `“${segment}”`))
    .join(" ");
}

/**
 * Each detail at the first of `fields` its path is or starts with, all of them joined one per line; the rest above the
 * form. A detail inside a field reads "“sub path” message".
 */
export function scheduleErrors(error: unknown, fields: readonly string[]): FormErrors & { lists: Record<string, string[]> } {
  if (!(error instanceof ApiError)) return { fields: {}, lists: {}, form: error instanceof Error ? error.message : "Something went wrong." };
  const lists: Record<string, string[]> = {};
  const unplaced: string[] = [];
  for (const detail of error.details) {
    const path = detail.path.replace(/^body\./, "");
    const field = [...fields].sort((a, b) => b.length - a.length).find((f) => path === f || path.startsWith(`${f}.`));
    const words = field && path !== field ? `${pathInWords(path.slice(field.length + 1))} ${detail.message}` : detail.message;
    if (field) (lists[field] ??= []).push(words);
    else unplaced.push(`${pathInWords(path)} ${detail.message}`);
  }
  const result: FormErrors & { lists: Record<string, string[]> } = {
    // One per line (the fields show their error with white-space: pre-line).
    fields: Object.fromEntries(Object.entries(lists).map(([field, messages]) => [field, messages.join("\n")])),
    lists,
  };
  if (!error.details.length) result.form = error.message;
  else if (unplaced.length) result.form = `${error.message.replace(/:.*$/, "")}: ${unplaced.join("; ")}.`;
  return result;
}
