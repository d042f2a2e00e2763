// Small renderers: timestamps, statuses, JSON. Everything user-supplied is rendered as text by React (never as
// HTML), so a payload or an e-mail holding markup or a `javascript:` URL shows as the characters it is.
import { Badge, Code } from "@mantine/core";
import { Fragment } from "react";

const TIME_STYLE = { dateStyle: "medium", timeStyle: "medium" } as const;
/** The browser's language and time zone; the server's drawing of the first rows sets the person's (withClock). */
let dateTime = new Intl.DateTimeFormat(undefined, TIME_STYLE);

/**
 * Runs a synchronous render with times written for `locale` and `timeZone` (what the browser will write once the
 * page's script runs); an unknown one keeps the default. Used where the API draws the first rows (first-page-server.tsx).
 */
export function withClock<T>(clock: { locale?: string; timeZone?: string }, render: () => T): T {
  const saved = dateTime;
  try {
    dateTime = new Intl.DateTimeFormat(clock.locale, { ...TIME_STYLE, timeZone: clock.timeZone });
  } catch {
    // A locale or zone this runtime does not know: its own.
  }
  try {
    return render();
  } finally {
    dateTime = saved;
  }
}

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

/**
 * An e-mail address that wraps only before its "@" or a dot when it does not fit (never inside a word, as
 * word-break: break-all did: "ad6411eb / 7b@exam / ple.test"); a part longer than the whole line still breaks.
 */
export function Email({ address }: { address: string }) {
  const parts = address.split(/(?=[@.])/);
  return (
    <span style={{ wordBreak: "normal", overflowWrap: "break-word" }} data-email={address}>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </span>
  );
}

/** A time as the clock reads in `timeZone` (an IANA zone), or null when the zone is unknown to this browser. */
export function formatInZone(iso: string, timeZone: string): string | null {
  try {
    return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone }).format(new Date(iso));
  } catch {
    return null;
  }
}

/**
 * A time in a given zone, with the zone's name (a schedule's runs read as its zone's clock: 08:00 in Nairobi is
 * "8:00 AM Africa/Nairobi", not 5:00 AM in the browser's UTC); the viewer's own clock in the tooltip.
 */
export function ZonedTime({ iso, timeZone }: { iso: string | null | undefined; timeZone: string }) {
  if (!iso) return <span>—</span>;
  const inZone = formatInZone(iso, timeZone);
  if (!inZone) return <Time iso={iso} />;
  return (
    <time dateTime={iso} title={`${formatTime(iso)} your time`}>
      {inZone} <span style={{ whiteSpace: "nowrap" }}>{timeZone}</span>
    </time>
  );
}

export const STATUSES = ["pending", "processing", "done", "failed", "cancelled"] as const;
export const FINAL_STATUSES: readonly string[] = ["done", "failed", "cancelled"];

// A coloured dot beside text in the body colour: readable whatever the colour.
export const STATUS_COLORS: Record<string, string> = { pending: "gray", processing: "blue", done: "green", failed: "red", cancelled: "orange" };

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLORS[status] ?? "gray"} variant="dot" data-status={status} miw="max-content">
      {status}
    </Badge>
  );
}

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  // A named region the keyboard can reach and scroll (arrow keys) in every browser: the browser's own scrolling box,
  // not a scripted one (issue 38 #13: the long payload had no name, and scrolled by keyboard only in Chromium).
  return (
    <Code
      block
      role="region"
      aria-label={`${label} as JSON`}
      tabIndex={0}
      data-testid="json-block"
      style={{ whiteSpace: "pre-wrap", wordBreak: "break-word", maxHeight: 360, overflow: "auto" }}
    >
      {value === undefined ? "—" : JSON.stringify(value, null, 2)}
    </Code>
  );
}

/** The last 8 characters of an id: UUID v7 ids made in the same millisecond share their first ones. */
export const shortId = (id: string) => id.slice(-8);

/** 850 → "850 ms", 3 200 → "3.2 s", 125 000 → "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** How long a job's last attempt took (start to finish), when both are known. */
export const jobDuration = (job: { started_at: string | null; finished_at: string | null }): number | null =>
  job.started_at && job.finished_at ? Math.max(0, Date.parse(job.finished_at) - Date.parse(job.started_at)) : null;
