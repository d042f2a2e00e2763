// What the dispatcher must read again after its wake-ups (issue 32). A new job's NOTIFY names its types, and a round
// woken by such news alone reads the due work of those types only: the look over every type (typesWithDueJobs) is a
// round trip a lone job would otherwise wait for. Every type is still looked at after any other wake-up (jobs back in
// line, finished attempts, the tick), when a round asked to run again (a job falling due, a limit freeing), and at
// least once per tick, so nothing waits longer than it did for a look at its type.

/** The wake-ups since the due work was last read, and the moments the dispatcher's rounds planned to look again. */
export class DispatchWakes {
  private readonly named = new Set<string>();
  private all = true;
  private lastAll = -Infinity;
  /** When the last round asked to run again (Infinity: only when woken). */
  private plannedAt = Infinity;
  /** The earliest moment a limit frees, as the last look at every type found it. */
  private limitsFreeAt = Infinity;

  /** `tickMs`: every type is looked at least this often while the dispatcher is woken. */
  constructor(private readonly tickMs: number) {}

  /** A wake-up: new jobs of `types`, or (no type named) anything that may have changed. */
  add(types?: readonly string[]): void {
    if (types?.length) for (const type of types) this.named.add(type);
    else this.all = true;
  }

  /**
   * Takes the wake-ups so far: answers the types whose due work to read, or null for every type. A timer may fire a
   * little early: a round within 2 ms of its planned moment looks at every type.
   */
  take(now = Date.now()): string[] | null {
    const all = this.all || this.named.size === 0 || now >= this.plannedAt - 2 || now - this.lastAll >= this.tickMs;
    const named = [...this.named];
    this.named.clear();
    this.all = false;
    if (!all) return named;
    this.lastAll = now;
    return null;
  }

  /**
   * A round ends having found `freeAt`, the earliest moment a limit holding its types' jobs back frees (Infinity:
   * none), looking at every type or not. Answers the moment worth a round: a round that looked at some types only
   * keeps what the last look at every type found (another type's rate limit freeing is worth a round then).
   */
  limitsFree(freeAt: number, lookedAtAll: boolean): number {
    if (lookedAtAll) this.limitsFreeAt = freeAt;
    return Math.min(freeAt, this.limitsFreeAt);
  }

  /** The round asks to run again in `ms` (null: only when woken); every type is looked at then. */
  planned(ms: number | null, now = Date.now()): void {
    this.plannedAt = ms === null ? Infinity : now + ms;
  }
}
