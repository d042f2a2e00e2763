// Following one job from a front end (docs/reference/events.md#progress-and-live-results) with nothing but its public token: its status, progress and output,
// live. In a browser through EventSource (`?token=`, since EventSource cannot send headers; it resumes by itself with
// Last-Event-ID); elsewhere (Node 18+) through fetch and the same stream parser as `events()`, resuming the same way.
// The output is rebuilt from the job's `job.output` events, each placed at its byte offset: a piece seen twice after
// a reconnection is skipped, so the text has no gap and no repeat.
import { createEventStream, type ConveyorEvent } from "./events.js";

/** A job's progress: the fraction done (0–1), what it is doing, and when the handler reported it. */
export type JobProgress = { fraction: number; message: string | null; at: string };

/** The job as its events carry it (GET /jobs/{id} without the payload). */
export type LiveJob = Record<string, unknown> & { id: string; status: string; progress?: JobProgress | null };

export type JobSubscriptionHandlers = {
  /** Every event's job: its status and fields as they are now. */
  onJob?(job: LiveJob): void;
  onProgress?(progress: JobProgress): void;
  /** A new piece of output, and the whole output so far. */
  onOutput?(chunk: string, output: string): void;
  /** Every event, as it arrives. */
  onEvent?(event: ConveyorEvent): void;
  /** The stream was refused or cut for good: the token is unknown, expired or revoked (401), or the job is gone (404). */
  onError?(error: JobSubscriptionError): void;
  /** The job reached its final event (succeeded, failed or cancelled); the subscription is over. */
  onEnd?(job: LiveJob): void;
};

export type SubscribeOptions = {
  /** The API's base URL, e.g. `https://conveyor.example.com`. Default: the page's own origin (`""`). */
  baseUrl?: string;
  /** How to read the stream. Default: EventSource where there is one (browsers), else fetch. */
  transport?: "eventsource" | "fetch";
  /** Another fetch (Node proxies, tests). Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** Wait before reconnecting a dropped fetch stream. Default: 1000 ms. */
  retryMs?: number;
};

export type JobSubscription = { close(): void };

export class JobSubscriptionError extends Error {
  override name = "JobSubscriptionError";
  constructor(
    message: string,
    /** The refusal's HTTP status when there was one (401, 404), else undefined. */
    readonly status?: number,
  ) {
    super(message);
  }
}

const EVENT_TYPES = [
  "job.created",
  "job.started",
  "job.retrying",
  "job.succeeded",
  "job.failed",
  "job.cancelled",
  "job.updated",
  "job.progress",
  "job.output",
] as const;
const FINAL_EVENTS = new Set(["job.succeeded", "job.failed", "job.cancelled"]);

const utf8Length = (text: string) => new TextEncoder().encode(text).length;

/**
 * Follows job `id` with its public token (`POST /jobs/{id}/public-token`) until the job ends, the token stops
 * working, or `close()`. Safe in browsers: it needs no other credential and sends no cookie.
 */
export function subscribeToJob(id: string, token: string, handlers: JobSubscriptionHandlers, options: SubscribeOptions = {}): JobSubscription {
  const baseUrl = (options.baseUrl ?? "").replace(/\/+$/, "");
  const path = `${baseUrl}/jobs/${encodeURIComponent(id)}/events`;
  let output = "";
  let outputBytes = 0;
  let lastProgressAt: string | undefined;
  let closed = false;

  const receive = (event: ConveyorEvent): boolean => {
    if (closed) return true;
    handlers.onEvent?.(event);
    const job = event.data as LiveJob;
    handlers.onJob?.(job);
    // Every event carries the job's progress as it was; a new report is told once, whichever event brought it (an
    // attempt's last report may come only with its terminal event).
    if (job.progress && job.progress.at !== lastProgressAt) {
      lastProgressAt = job.progress.at;
      handlers.onProgress?.(job.progress);
    }
    const piece = event.type === "job.output" ? (event.data.output as { offset: number; chunk: string } | undefined) : undefined;
    // Placed at its offset: a piece already held (seen again after a reconnection) adds nothing.
    if (piece && piece.offset === outputBytes) {
      output += piece.chunk;
      outputBytes += utf8Length(piece.chunk);
      handlers.onOutput?.(piece.chunk, output);
    }
    if (!FINAL_EVENTS.has(event.type)) return false;
    handlers.onEnd?.(job);
    return true;
  };

  const transport = options.transport ?? (typeof globalThis.EventSource === "function" ? "eventsource" : "fetch");
  if (transport === "eventsource") {
    const source = new EventSource(`${path}?token=${encodeURIComponent(token)}`);
    const close = () => {
      closed = true;
      source.close();
    };
    const onMessage = (message: MessageEvent<string>) => {
      let event: ConveyorEvent;
      try {
        event = JSON.parse(message.data) as ConveyorEvent;
      } catch {
        return;
      }
      if (receive(event)) close();
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onMessage);
    // EventSource reconnects by itself after a dropped connection (readyState CONNECTING); a refusal (401, 404)
    // closes it for good, and it does not say which status it was.
    source.onerror = () => {
      if (closed || source.readyState !== EventSource.CLOSED) return;
      close();
      handlers.onError?.(new JobSubscriptionError("The job's stream was refused: the token is unknown, expired or revoked, or the job is gone."));
    };
    return { close };
  }

  const abort = new AbortController();
  void createEventStream(
    {
      jobId: id,
      signal: abort.signal,
      retryMs: options.retryMs,
      onEvent(event) {
        if (receive(event)) abort.abort();
      },
      onRefused(status) {
        if (closed) return;
        closed = true;
        handlers.onError?.(
          new JobSubscriptionError(`The job's stream was refused with ${status}: the token is unknown, expired or revoked, or the job is gone.`, status),
        );
      },
    },
    {
      baseUrl,
      fetch: options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init)),
      headers: () => ({ Authorization: `Bearer ${token}` }),
    },
  );
  return {
    close() {
      closed = true;
      abort.abort();
    },
  };
}
