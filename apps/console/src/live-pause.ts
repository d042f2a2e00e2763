// "Pause live updates" on lists (issue 48; Oban Web's and Sidekiq's pause/poll switch): while paused, live events do not
// change a list under the person reading it (rows do not move, appear or leave); resumed, each list is read again at
// once. The job's own page keeps following its job. One switch for the tab, kept for the tab's life.
import { useSyncExternalStore } from "react";

let paused = false;
const listeners = new Set<() => void>();

export function listsPaused(): boolean {
  return paused;
}

/** Pauses or resumes; `onResume` runs when live updates come back (to read the lists again). */
export function setListsPaused(next: boolean, onResume?: () => void): void {
  if (paused === next) return;
  paused = next;
  for (const listener of listeners) listener();
  if (!next) onResume?.();
}

export function useListsPaused(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => paused,
    () => false,
  );
}
