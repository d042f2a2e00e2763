// One client's event stream (docs/reference/events.md#events): the org's events from the process' shared tail, filtered, resumable.
// A client that resumes (Last-Event-ID) first reads what it missed from Postgres, then continues from the tail:
// it subscribes before catching up and ignores the tail until its catch-up has reached the tail's position, so
// nothing falls between the two and nothing is sent twice (every event at or below the ids it has covered is
// dropped). A client that stops reading is disconnected once more than MAX_BUFFERED_BYTES wait for it.
import { FINAL_EVENT_TYPES } from "@conveyor/contracts";
import { findJobEventState, isUuid, readEventTexts, type EventText } from "@conveyor/db";
import { notFound } from "./errors";
import type { Caller, ServiceDeps } from "./deps";
import { sseFrame, type EventSubscriber } from "./event-hub";

/** Bytes a stream may hold unsent (the previous batches a client has not read yet) before it is dropped. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Events read from Postgres per catch-up query. */
const CATCH_UP_PAGE = 500;
/** Catch-up writes are cut about this large, each waiting for the client to take the previous one. */
const CATCH_UP_CHUNK = 64 * 1024;

/** Where a stream writes: the HTTP response, seen through what the stream needs of it. */
export type EventSink = {
  /** False when the caller should wait for `drained()` before writing more. */
  write(chunk: string): boolean;
  /** Resolves when the client has taken what was written, or went away. */
  drained(): Promise<void>;
  /** Bytes written but not yet taken by the client. */
  buffered(): number;
  closed(): boolean;
  /** Resolves when the client went away or the stream was ended. */
  done: Promise<void>;
  end(): void;
  /** Disconnects a client that does not read. */
  drop(why: string): void;
};

export type EventStreamInput = {
  caller: Caller;
  /** The id of the last event the client has (Last-Event-ID), if it resumes. */
  lastEventId?: number;
  /** GET /events?job_id= */
  jobId?: string;
  /** ?type= */
  types?: readonly string[];
  /** GET /jobs/{id}/events: this job's stream, which ends with the job's final event. */
  job?: string;
};

export type EventStream = { run(sink: EventSink): Promise<void> };

const FINAL = new Set<string>(FINAL_EVENT_TYPES);

/**
 * Checks the request and subscribes to the tail (so a 404 or an unreachable Postgres is answered before any byte
 * of the stream); `run` then streams until the client leaves (or the job's final event was sent).
 */
export async function openEventStream(input: EventStreamInput, deps: Pick<ServiceDeps, "db" | "events">): Promise<EventStream> {
  const orgId = input.caller.orgId;
  const jobId = input.job ?? input.jobId;
  let covered = input.lastEventId ?? 0;
  if (input.job !== undefined) {
    const state = isUuid(input.job) ? await findJobEventState(deps.db.pool, orgId, input.job) : null;
    if (!state) throw notFound("Job");
    // Already final, and the client has its final event: nothing more will ever come.
    if (state.finalEventId !== null && covered >= state.finalEventId) return { run: (sink) => Promise.resolve(sink.end()) };
  }
  const types = input.types?.length ? new Set(input.types) : undefined;
  const ofJob = (event: EventText) => jobId === undefined || event.jobId === jobId;
  const wanted = (event: EventText) => types === undefined || types.has(event.type);
  const unfiltered = jobId === undefined && types === undefined;
  // A job's stream ends with the job's final event, even when its type filter does not send that one.
  const ends = (events: readonly EventText[]) => input.job !== undefined && events.some((e) => FINAL.has(e.type));

  let sink: EventSink | undefined;
  let live = false;
  const subscriber: EventSubscriber = {
    orgId,
    jobId,
    deliver(events, frames) {
      if (!live || !sink || sink.closed()) return;
      const fresh = events[0]!.id > covered;
      const relevant = fresh && jobId === undefined ? events : events.filter((e) => e.id > covered && ofJob(e));
      const list = unfiltered ? relevant : relevant.filter(wanted);
      covered = Math.max(covered, events[events.length - 1]!.id);
      if (list.length) {
        // What the client has not taken of earlier batches decides; this batch is written whatever its size.
        if (sink.buffered() > MAX_BUFFERED_BYTES) return sink.drop(`more than ${MAX_BUFFERED_BYTES} bytes of events waited for the client`);
        sink.write(list === events ? frames() : list.map(sseFrame).join(""));
      }
      if (ends(relevant)) sink.end();
    },
    heartbeat() {
      if (!sink || sink.closed()) return;
      if (sink.buffered() > MAX_BUFFERED_BYTES) return sink.drop(`more than ${MAX_BUFFERED_BYTES} bytes of events waited for the client`);
      sink.write(": keep-alive\n\n");
    },
  };
  const subscription = await deps.events.subscribe(subscriber);
  // A new stream of all the org's events starts now; a job's stream, or a resumed one, starts where asked.
  if (input.lastEventId === undefined && input.job === undefined) covered = subscription.position;

  return {
    async run(out) {
      sink = out;
      try {
        out.write(": connected\n\n");
        const ended = await catchUp(out);
        if (ended || out.closed()) return;
        await out.done;
      } finally {
        subscription.unsubscribe();
      }
    },
  };

  /** Sends what the client missed, up to the tail's position, then goes live. True when the job's stream ended. */
  async function catchUp(out: EventSink): Promise<boolean> {
    for (;;) {
      const target = deps.events.current();
      // Synchronous from the check to the switch: no batch can be delivered in between.
      if (covered >= target) {
        live = true;
        return false;
      }
      // A job's few events are filtered here, so that its final event is seen even when its type is not wanted.
      const page = await readEventTexts(deps.db.pool, {
        orgId,
        after: BigInt(covered),
        upTo: BigInt(target),
        jobId,
        types: input.job === undefined ? input.types : undefined,
        limit: CATCH_UP_PAGE,
      });
      let chunk = "";
      for (const event of page.events) {
        if (!wanted(event)) continue;
        chunk += sseFrame(event);
        if (chunk.length >= CATCH_UP_CHUNK) {
          if (!out.write(chunk)) await out.drained();
          chunk = "";
          if (out.closed()) return false;
        }
      }
      if (chunk && !out.write(chunk)) await out.drained();
      if (out.closed()) return false;
      // A short page covered everything up to the target; a full one, up to its last event.
      covered = page.events.length === CATCH_UP_PAGE ? page.events[page.events.length - 1]!.id : Math.max(covered, target);
      if (ends(page.events)) {
        out.end();
        return true;
      }
    }
  }
}
