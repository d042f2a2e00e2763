// Each attempt is a span (docs/reference/high-availability.md#scale-out-and-observability) in the trace of the request that created its job (the traceparent stored with the
// job), with the job's id, type, organization, the attempt number and its outcome. What the handler does inside —
// Postgres, Redis, a provider's HTTP call (which carries `traceparent` onward) — nests under it. When tracing is off
// nothing is made: no context, no span, no cost per job.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import { tracingEnabled } from "@conveyor/tracing";

const tracer = trace.getTracer("conveyor-worker");
const ON = tracingEnabled();

export type AttemptSpan = {
  /** Runs `fn` inside the attempt's span. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Records the outcome and ends the span (once; later calls do nothing). */
  end(outcome: string, error?: string): void;
};

export function startAttemptSpan(job: { id: string; orgId: string; traceParent: string | null }, type: string, attempt: number): AttemptSpan | null {
  if (!ON) return null;
  const parent: Context = job.traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: job.traceParent }) : ROOT_CONTEXT;
  const span: Span = tracer.startSpan(
    `attempt ${type}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { "conveyor.job.id": job.id, "conveyor.job.type": type, "conveyor.org.id": job.orgId, "conveyor.attempt": attempt },
    },
    parent,
  );
  const inside = trace.setSpan(parent, span);
  let ended = false;
  return {
    run: (fn) => context.with(inside, fn),
    end(outcome, error) {
      if (ended) return;
      ended = true;
      span.setAttribute("conveyor.outcome", outcome);
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}
