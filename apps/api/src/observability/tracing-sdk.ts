// The API's OpenTelemetry SDK and instrumentations (tracing.ts loads this module only when tracing is on).
import { startNodeSDK } from "@opentelemetry/sdk-node";
import { ExpressInstrumentation, ExpressLayerType } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";

/** Probes and scrapes are not traced. */
const UNTRACED = new Set(["/healthz", "/readyz", "/metrics"]);

/** Starts the Node SDK with the API's instrumentations (traces only). */
export function startSdk(): { shutdown(): Promise<void> } {
  return startNodeSDK({
    // Traces only: metrics stay on /metrics (Prometheus), logs in winston.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? "/").split("?")[0]!),
        requireParentforOutgoingSpans: true,
      }),
      // One span for the route's handler; a span per middleware and router layer (a dozen per request) cost more
      // than the request itself and say nothing the handler's span does not (bench: tracing on vs off).
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      // Pool checkouts and connects are not spans: a query span says all a trace needs, at a fraction of the cost.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
}
