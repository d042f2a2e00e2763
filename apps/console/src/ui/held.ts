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

export function useHeldList<T extends { id: string }>(fresh: readonly T[]): Held<T> {
  const [pointer, setPointer] = useState(false);
  const [focus, setFocus] = useState(false);
  const shown = useRef<readonly T[]>(fresh);
  const [, setDropped] = useState(0);
  const held = pointer || focus;
  let rows: (T & { gone?: boolean })[];
  let waiting = 0;
  if (!held) {
    rows = [...fresh];
  } else {
    const byId = new Map(fresh.map((row) => [row.id, row]));
    rows = shown.current.map((row) => byId.get(row.id) ?? { ...row, gone: true });
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
      shown.current = shown.current.filter((row) => row.id !== id);
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
