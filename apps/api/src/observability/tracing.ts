// OpenTelemetry for the API (SPEC §17): the official Node SDK, configured by the standard OTEL_* variables and off
// unless an OTLP endpoint is set. Imported first by server.ts (tracing-init.ts), before the modules it instruments
// (http, express, pg, ioredis, undici) are loaded. Spans leave through the SDK's batch processor: a bounded queue,
// exported in the background, dropped when the exporter is down or slow — never a slower or different response.
import { startNodeSDK } from "@opentelemetry/sdk-node";
import { ExpressInstrumentation, ExpressLayerType } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { markTracingOn } from "./trace-context";

/** Whether OTEL_* asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== "true";
}

/** Probes and scrapes are not traced. */
const UNTRACED = new Set(["/healthz", "/readyz", "/metrics"]);

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
  markTracingOn();
}

/** Exports what is buffered (within the exporter's timeout) and stops. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => {});
  sdk = undefined;
}
