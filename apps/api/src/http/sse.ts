// Serving a server-sent event stream (text/event-stream) over an Express response: the headers that keep proxies
// from buffering or caching it, and the response seen as the sink an event stream writes to.
import type { Response } from "express";
import type { EventSink, EventStream } from "../services/infrastructure/event-stream";

export async function serveEventStream(res: Response, stream: EventStream): Promise<void> {
  // The client may have gone while the request was being checked: its 'close' has then been and gone.
  let closed = res.destroyed;
  const done = closed
    ? Promise.resolve()
    : new Promise<void>((resolve) =>
        res.once("close", () => {
          closed = true;
          resolve();
        }),
      );
  res.status(200);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  // nginx and friends would otherwise hold events back to fill their buffers.
  res.setHeader("X-Accel-Buffering", "no");
  res.flushHeaders();
  res.socket?.setNoDelay(true);

  const sink: EventSink = {
    write: (chunk) => res.write(chunk),
    drained: () =>
      new Promise<void>((resolve) => {
        if (closed || !res.writableNeedDrain) return resolve();
        const go = () => {
          res.off("drain", go).off("close", go);
          resolve();
        };
        res.on("drain", go).on("close", go);
      }),
    buffered: () => res.writableLength,
    closed: () => closed || res.writableEnded,
    done,
    end: () => {
      if (!res.writableEnded) res.end();
    },
    drop: (why) => {
      res.req.log.info(`event stream dropped: ${why}`);
      res.destroy();
    },
  };
  await stream.run(sink);
}
