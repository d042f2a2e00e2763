// OpenTelemetry for the API (SPEC §17): the official Node SDK, configured by the standard OTEL_* variables and off
// unless an OTLP endpoint is set. Imported first by server.ts (tracing-init.ts), before the modules it instruments
// (http, express, pg, ioredis, undici) are loaded. Spans leave through the SDK's batch processor: a bounded queue,
// exported in the background, dropped when the exporter is down or slow — never a slower or different response.
import { markTracingOn } from "./trace-context";

/** Whether OTEL_* asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== "true";
}

let sdk: { shutdown(): Promise<void> } | undefined;

/** Starts tracing when OTEL_* asks for it; once per process. */
export function startTracing(serviceName: string): void {
  if (sdk || !tracingEnabled()) return;
  process.env.OTEL_SERVICE_NAME ||= serviceName;
  // Loaded here, synchronously, only when tracing is on: the SDK and its instrumentations are ≈ 30 MB and 0.7 s of
  // start-up, and they must patch http, pg and ioredis before those are loaded (an import() would come too late).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require("./tracing-sdk") as typeof import("./tracing-sdk");
  sdk = startSdk();
  markTracingOn();
}

/** Exports what is buffered (within the exporter's timeout) and stops. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => {});
  sdk = undefined;
}
