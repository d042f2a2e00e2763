// A time said from now ("in 40 s", "3 min ago"), kept true by one shared clock that ticks while any is on screen:
// next attempts and due times read better that way than as a clock time (Sidekiq's "in 2 minutes"), and a time that
// has passed says so instead of reading like one still to come (issue 48 #10: "runs 5:20:48 AM", in the past).
import { useSyncExternalStore } from "react";
import { formatTime } from "./format";

const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  now = Date.now();
  timer ??= setInterval(() => {
    now = Date.now();
    for (const l of listeners) l();
  }, 1_000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** Now, to the second, re-rendering its component each second while it is shown. */
export function useNow(): number {
  // The server's drawing of the first rows (first-page-server.tsx) reads its own clock at that moment.
  return useSyncExternalStore(subscribe, () => now, Date.now);
}

/** 40 000 → "40 s", 150 000 → "2 min 30 s", 7 200 000 → "2 h". */
export function spanWords(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 && m < 10 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 && h < 10 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

/** "in 40 s" or "40 s ago" ("now" within a second), from `at` to `now`. */
export function relativeWords(at: number, nowMs: number): string {
  const diff = at - nowMs;
  if (Math.abs(diff) < 1000) return "now";
  return diff > 0 ? `in ${spanWords(diff)}` : `${spanWords(diff)} ago`;
}

/** A time said from now, its clock time in the tooltip and the machine-readable attribute. */
export function RelativeTime({ iso }: { iso: string }) {
  const nowMs = useNow();
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relativeWords(new Date(iso).getTime(), nowMs)}
    </time>
  );
}
