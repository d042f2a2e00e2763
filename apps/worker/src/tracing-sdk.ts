// The worker's OpenTelemetry SDK and instrumentations (tracing.ts loads this module only when tracing is on).
import { startNodeSDK } from "@opentelemetry/sdk-node";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";

/** Starts the Node SDK with the worker's instrumentations (traces only). */
export function startSdk(): { shutdown(): Promise<void> } {
  return startNodeSDK({
    // Traces only: metrics stay on /metrics (Prometheus), logs in winston.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // The health server's probes and scrapes are not traced.
      new HttpInstrumentation({ ignoreIncomingRequestHook: () => true, requireParentforOutgoingSpans: true }),
      // Pool checkouts and connects are not spans: a query span says all a trace needs, at a fraction of the cost.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
}
