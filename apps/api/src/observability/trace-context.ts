// The trace context a job stores (SPEC §17), kept apart from the SDK (tracing.ts) so that the services that read it
// load only the small API package, and pay nothing per job while tracing is off.
import { context, propagation } from "@opentelemetry/api";

let on = false;

/** Called by startTracing once the SDK runs. */
export function markTracingOn(): void {
  on = true;
}

/**
 * The W3C traceparent of the current request's span (which continues an incoming `traceparent`), stored with a job so
 * that its attempts join the request's trace; null when tracing is off or nothing is being traced.
 */
export function currentTraceParent(): string | null {
  if (!on) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}
