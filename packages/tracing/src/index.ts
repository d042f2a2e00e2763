// OpenTelemetry for the API and the worker (docs/reference/high-availability.md#scale-out-and-observability), set up once for both: the official Node SDK, configured by the
// standard OTEL_* variables and off unless an OTLP endpoint is set. Each app starts it from the first import of its
// entry point (its tracing-init.ts), before the modules it instruments (http, express, pg, ioredis, undici) are
// loaded. Spans leave through the SDK's batch processor: a bounded queue, exported in the background, dropped when the
// exporter is down or slow — an exporter's trouble never slows or changes a response or a job's outcome.
//
// This module loads only @opentelemetry/api; the SDK (sdk.ts) is loaded when tracing is on, so what reads the trace
// context per request or job pays nothing while tracing is off.
import { context, propagation } from "@opentelemetry/api";
import type { SdkOptions } from "./sdk";

export type TracingOptions = SdkOptions & {
  /** service.name of the process' spans, unless OTEL_SERVICE_NAME names one. */
  serviceName: string;
};

/** Whether OTEL_* asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== "true";
}

let sdk: { shutdown(): Promise<void> } | undefined;

/** Starts tracing when OTEL_* asks for it; once per process. */
export function startTracing(options: TracingOptions): void {
  if (sdk || !tracingEnabled()) return;
  process.env.OTEL_SERVICE_NAME ||= options.serviceName;
  // Loaded here, synchronously, only when tracing is on: the SDK and its instrumentations are ≈ 30 MB and 0.7 s of
  // start-up, and they must patch http, pg and ioredis before those are loaded (an import() would come too late).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require("./sdk") as typeof import("./sdk");
  sdk = startSdk(options);
}

/** Exports what is buffered (within the exporter's timeout) and stops. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => {});
  sdk = undefined;
}

/**
 * The W3C traceparent of the current span (a request's, which continues an incoming `traceparent`), stored with a job
 * so that its attempts join the request's trace; null when tracing is off or nothing is being traced.
 */
export function currentTraceParent(): string | null {
  if (!sdk) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}
