// Small renderers: timestamps, statuses, JSON. Everything user-supplied is rendered as text by React (never as
// HTML), so a payload or an e-mail holding markup or a `javascript:` URL shows as the characters it is.
import { Badge, Code, ScrollArea } from "@mantine/core";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {formatTime(iso)}
    </time>
  );
}

export const STATUSES = ["pending", "processing", "done", "failed", "cancelled"] as const;
export type JobStatus = (typeof STATUSES)[number];
export const FINAL_STATUSES: readonly string[] = ["done", "failed", "cancelled"];

// A coloured dot beside text in the body colour: readable whatever the colour.
const STATUS_COLORS: Record<string, string> = { pending: "gray", processing: "blue", done: "green", failed: "red", cancelled: "orange" };

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLORS[status] ?? "gray"} variant="dot" data-status={status} miw="max-content">
      {status}
    </Badge>
  );
}

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <ScrollArea.Autosize mah={360} type="auto" aria-label={label}>
      <Code block style={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
        {value === undefined ? "—" : JSON.stringify(value, null, 2)}
      </Code>
    </ScrollArea.Autosize>
  );
}

/** The last 8 characters of an id: UUID v7 ids made in the same millisecond share their first ones. */
export const shortId = (id: string) => id.slice(-8);
