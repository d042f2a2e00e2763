// An event-stream client for tests: reads text/event-stream over plain HTTP with `eventsource-parser`, as a
// client library would, and keeps what arrived (events, comments) so tests can wait on it.
import http from "node:http";
import { createParser } from "eventsource-parser";

export type SseEvent = { id?: string; event?: string; data: string };

export type SseClient = {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body of a refusal (status other than 200), read whole. */
  body: string;
  events: SseEvent[];
  comments: { text: string; at: number }[];
  /** Resolves once at least `count` events have arrived (rejects after `timeoutMs`). */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves when the server ends the stream (or the connection is lost). */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Closes the connection from this side. */
  close(): void;
};

/** Opens an event stream at `url`; resolves once the response's headers (or a refusal's whole body) arrived. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise<SseClient>((resolve, reject) => {
    const request = http.get(url, { headers: { Accept: "text/event-stream", ...headers }, agent: false }, (res) => {
      res.setEncoding("utf8");
      const events: SseEvent[] = [];
      const comments: { text: string; at: number }[] = [];
      const waiters = new Set<() => void>();
      let ended = false;
      let endedResolve!: () => void;
      const endedPromise = new Promise<void>((r) => (endedResolve = r));
      const finish = () => {
        ended = true;
        endedResolve();
        for (const wake of waiters) wake();
      };
      res.once("end", finish).once("close", finish).once("error", finish);

      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: "",
        events,
        comments,
        ended: endedPromise,
        isEnded: () => ended,
        close: () => request.destroy(),
        waitForEvents(count, timeoutMs = 15_000) {
          return new Promise<SseEvent[]>((done, fail) => {
            const check = () => {
              if (events.length >= count) {
                cleanup();
                done(events);
              } else if (ended) {
                cleanup();
                fail(new Error(`the stream ended after ${events.length} of ${count} events`));
              }
            };
            const timer = setTimeout(() => {
              cleanup();
              fail(new Error(`timed out after ${timeoutMs} ms with ${events.length} of ${count} events`));
            }, timeoutMs);
            const cleanup = () => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          });
        },
      };

      if (res.statusCode !== 200) {
        res.on("data", (chunk: string) => (client.body += chunk));
        return void res.once("end", () => resolve(client));
      }
      const parser = createParser({
        onEvent: (event) => {
          events.push({ id: event.id, event: event.event, data: event.data });
          for (const wake of waiters) wake();
        },
        onComment: (text) => comments.push({ text, at: Date.now() }),
      });
      res.on("data", (chunk: string) => parser.feed(chunk));
      resolve(client);
    });
    request.once("error", reject);
  });
}
