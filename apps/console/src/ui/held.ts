// A live list that holds still under the person's hand (issue 48 #6: the Retries list reordered under the pointer,
// and the row clicked was another job). While the pointer is over the list or the focus is in it, the rows keep their
// places: a row still there takes its new fields, a row that left stays (marked gone) and new rows wait; the count of
// what waits is told, and everything lands when the pointer and the focus leave. A row the person acted on (retried,
// given up) may leave at once: `drop` it.
import { useRef, useState, type FocusEvent } from "react";

export type Held<T> = { rows: (T & { gone?: boolean })[]; waiting: number; bind: ListBindings; drop(id: string): void };
type ListBindings = {
  onPointerEnter(): void;
  onPointerLeave(): void;
  onFocus(): void;
  onBlur(event: FocusEvent<HTMLElement>): void;
};

export function useHeldList<T extends { id: string }>(all: readonly T[]): Held<T> {
  const [pointer, setPointer] = useState(false);
  const [focus, setFocus] = useState(false);
  // Rows the person acted on: gone from the list at once, whatever answer is on screen or held — until an answer no
  // longer has them (then they leave the held rows too; a job that fails again may come back as a new row).
  const dropped = useRef(new Set<string>());
  const [, setDropped] = useState(0);
  const shown = useRef<readonly T[]>(all);
  for (const id of dropped.current) {
    if (all.some((row) => row.id === id)) continue;
    dropped.current.delete(id);
    shown.current = shown.current.filter((row) => row.id !== id);
  }
  const fresh = dropped.current.size ? all.filter((row) => !dropped.current.has(row.id)) : all;
  const held = pointer || focus;
  let rows: (T & { gone?: boolean })[];
  let waiting = 0;
  if (!held) {
    rows = [...fresh];
  } else {
    const byId = new Map(fresh.map((row) => [row.id, row]));
    rows = shown.current.filter((row) => !dropped.current.has(row.id)).map((row) => byId.get(row.id) ?? { ...row, gone: true });
    const known = new Set(shown.current.map((row) => row.id));
    waiting = fresh.filter((row) => !known.has(row.id)).length + rows.filter((row) => row.gone).length;
    const order = (list: readonly { id: string }[]) => list.map((row) => row.id).join();
    if (waiting === 0 && order(rows) !== order(fresh)) waiting = 1;
  }
  if (!held) shown.current = fresh;
  return {
    rows,
    waiting,
    drop: (id) => {
      dropped.current.add(id);
      setDropped((n) => n + 1);
    },
    bind: {
      onPointerEnter: () => setPointer(true),
      onPointerLeave: () => setPointer(false),
      onFocus: () => setFocus(true),
      onBlur: (event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setFocus(false);
      },
    },
  };
}
