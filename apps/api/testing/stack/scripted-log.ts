// What the scripted plugin (scripted-plugin.js) wrote to $SCRIPTED_MARKER_FILE, read back: which markers ran, how
// often and in which process, and when each execution of a span started and ended — how whole-system tests see
// "ran exactly once", "never two at once" and "after its dependencies" from the handler's side.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** One execution of a span: start and end in ms (end null: it was killed mid-way), and the worker's pid. */
export type SpanRun = { span: string; start: number; end: number | null; pid: number | null };

export class ScriptedLog {
  /** The file to give workers as SCRIPTED_MARKER_FILE. */
  readonly file: string;

  /** A new, empty file in a temporary folder named after `name`. */
  constructor(name: string) {
    this.file = path.join(mkdtempSync(path.join(os.tmpdir(), `conveyor-${name}-`)), "marks.log");
    writeFileSync(this.file, "");
  }

  private lines(): string[] {
    return readFileSync(this.file, "utf8").split("\n").filter(Boolean);
  }

  /** How many times each marker's handler ran (each attempt writes its marker once, before its work). */
  markerCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const line of this.lines()) {
      const marker = /^(\S+) attempt=\d+ pid=\d+$/.exec(line)?.[1];
      if (marker) counts.set(marker, (counts.get(marker) ?? 0) + 1);
    }
    return counts;
  }

  /** How many times the handler ran for `marker`. */
  runsOf(marker: string): number {
    return this.markerCounts().get(marker) ?? 0;
  }

  /** Every execution of the spans starting with `prefix`, in the order they started. */
  runs(prefix: string): SpanRun[] {
    const found: SpanRun[] = [];
    const open = new Map<string, SpanRun>();
    const pids = new Map<string, number>();
    for (const line of this.lines()) {
      const marker = /^(\S+) attempt=\d+ pid=(\d+)$/.exec(line);
      if (marker) {
        // Written before the span's start, by the same attempt.
        pids.set(marker[1]!, Number(marker[2]));
        continue;
      }
      const [what, span, at] = line.split(" ");
      if (!span?.startsWith(prefix)) continue;
      if (what === "start") {
        const run = { span, start: Number(at), end: null, pid: pids.get(span) ?? null };
        open.set(span, run);
        found.push(run);
      } else if (what === "end" && open.has(span)) open.get(span)!.end = Number(at);
    }
    return found;
  }

  /** The executions of the spans starting with `prefix` that finished, in the order they started. */
  finished(prefix: string): (SpanRun & { end: number })[] {
    return this.runs(prefix)
      .filter((run): run is SpanRun & { end: number } => run.end !== null)
      .sort((a, b) => a.start - b.start);
  }
}
