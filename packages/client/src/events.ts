// Server-sent events over fetch (not EventSource): fetch can send the credential headers a service uses, reads
// the same in every browser and in Node, and lets the caller see a 401 instead of a silent reconnect loop.
import { createParser } from "eventsource-parser";

/** One event of `GET /events` (docs/reference/events.md#events): `data` is the job without its payload. */
export type ConveyorEvent = {
  id: string;
  type: string;
  time: string;
  job_id: string;
  data: Record<string, unknown>;
};

export type EventStreamOptions = {
  /** Only this job's events (`GET /jobs/{id}/events`, which ends after the job's final event). */
  jobId?: string;
  /** Only events of this type, e.g. `job.succeeded`. */
  type?: string;
  /** Resume after this event id. */
  lastEventId?: string;
  /** Stops the stream. */
  signal: AbortSignal;
  onEvent(event: ConveyorEvent): void;
  /** Called when a connection opens (again): a caller that missed events while away can refresh. */
  onOpen?(): void;
  /** Called with the status of a refused connection (e.g. 401: the credential expired); the stream ends. */
  onRefused?(status: number): void;
  /** Wait before reconnecting after a dropped connection. Default: 1000 ms. */
  retryMs?: number;
};

const FINAL_EVENTS = new Set(["job.succeeded", "job.failed", "job.cancelled"]);

type Transport = { baseUrl: string; fetch: typeof globalThis.fetch; headers(): Record<string, string> };

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });

/** Reads the stream until `signal` aborts, reconnecting with the last event id; resolves when it stops. */
export async function createEventStream(options: EventStreamOptions, transport: Transport): Promise<void> {
  let lastEventId = options.lastEventId;
  const { signal } = options;
  while (!signal.aborted) {
    const query = new URLSearchParams();
    if (options.type) query.set("type", options.type);
    const path = options.jobId ? `/jobs/${encodeURIComponent(options.jobId)}/events` : "/events";
    const url = `${transport.baseUrl}${path}${query.size ? `?${query.toString()}` : ""}`;
    const headers: Record<string, string> = { ...transport.headers(), Accept: "text/event-stream" };
    if (lastEventId) headers["Last-Event-ID"] = lastEventId;
    let finished = false;
    try {
      const res = await transport.fetch(url, { headers, signal, cache: "no-store" });
      if (!res.ok || !res.body) {
        await res.body?.cancel();
        // A refusal is final (401, 403, 404); an unavailable API is retried.
        if (res.status < 500) return void options.onRefused?.(res.status);
      } else {
        options.onOpen?.();
        const parser = createParser({
          onEvent(message) {
            if (message.id) lastEventId = message.id;
            if (message.event && FINAL_EVENTS.has(message.event)) finished = true;
            try {
              options.onEvent(JSON.parse(message.data) as ConveyorEvent);
            } catch {
              // A malformed event is skipped rather than ending the stream.
            }
          },
        });
        const decoder = new TextDecoder();
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    // A job's stream ends by itself after the job's final event; any other end is a dropped connection.
    if (finished && options.jobId) return;
    await sleep(options.retryMs ?? 1000, signal);
  }
}
