// The OpenTelemetry SDK and the instrumentations both apps use (index.ts loads this module only when tracing is on).
import { startNodeSDK } from "@opentelemetry/sdk-node";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";

export type SdkOptions = {
  /** Incoming requests not traced: these paths (probes and scrapes), or every one (a health server's). */
  untracedIncoming: ReadonlySet<string> | "all";
  /** One span per Express route handler, for a process that serves its requests with Express. Default false. */
  express?: boolean;
};

/** Starts the Node SDK with the process' instrumentations (traces only). */
export function startSdk(options: SdkOptions): { shutdown(): Promise<void> } {
  const untraced = options.untracedIncoming;
  return startNodeSDK({
    // Traces only: metrics stay on /metrics (Prometheus), logs in winston.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => untraced === "all" || untraced.has((req.url ?? "/").split("?")[0]!),
        requireParentforOutgoingSpans: true,
      }),
      ...(options.express ? [expressInstrumentation()] : []),
      // Pool checkouts and connects are not spans: a query span says all a trace needs, at a fraction of the cost.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
}

/** Express's instrumentation, required only by a process that serves Express (the worker never loads it). */
function expressInstrumentation() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const express = require("@opentelemetry/instrumentation-express") as typeof import("@opentelemetry/instrumentation-express");
  // One span for the route's handler; a span per middleware and router layer (a dozen per request) cost more
  // than the request itself and say nothing the handler's span does not (bench: tracing on vs off).
  return new express.ExpressInstrumentation({ ignoreLayersType: [express.ExpressLayerType.MIDDLEWARE, express.ExpressLayerType.ROUTER] });
}
