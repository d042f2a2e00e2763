// OpenTelemetry for the worker (SPEC §17): the official Node SDK, configured by the standard OTEL_* variables and off
// unless an OTLP endpoint is set. Imported first by main.ts, before the modules it instruments (http, pg, ioredis,
// undici) are loaded. Spans leave through the SDK's batch processor: a bounded queue, exported in the background, and
// dropped when the exporter is down or slow — an exporter's trouble never delays a job or changes its outcome.
import { startNodeSDK } from "@opentelemetry/sdk-node";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";

/** Whether OTEL_* asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== "true";
}

let sdk: { shutdown(): Promise<void> } | undefined;

/** Starts tracing when OTEL_* asks for it; once per process. */
export function startTracing(serviceName: string): void {
  if (sdk || !tracingEnabled()) return;
  process.env.OTEL_SERVICE_NAME ||= serviceName;
  sdk = startNodeSDK({
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

/** Exports what is buffered (within the exporter's timeout) and stops. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => {});
  sdk = undefined;
}
