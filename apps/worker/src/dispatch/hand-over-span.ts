// The dispatcher's hand-over of a job to BullMQ is a span (docs/reference/high-availability.md#scale-out-and-observability) in the trace of the request that created the
// job, between the creating request's span and the attempt's: from the moment the dispatcher took the job to the
// moment BullMQ holds it. When tracing is off nothing is made and the jobs' trace contexts are not even read.
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { DispatchCandidate } from "@conveyor/db";
import { tracingEnabled } from "@conveyor/tracing";

const tracer = trace.getTracer("conveyor-worker");

/** Whether hand-overs are traced (and the dispatcher reads the jobs' trace contexts). */
export const HAND_OVER_SPANS = tracingEnabled();

/** Starts one span per job handed over, at `takenAt`; the answer ends them all, with the error if BullMQ refused them. */
export function startHandOverSpans(jobs: readonly DispatchCandidate[], takenAt: number): ((error?: Error) => void) | null {
  if (!HAND_OVER_SPANS) return null;
  const spans = jobs.map((job) =>
    tracer.startSpan(
      `hand over ${job.type}`,
      {
        kind: SpanKind.PRODUCER,
        startTime: takenAt,
        attributes: { "conveyor.job.id": job.jobId, "conveyor.job.type": job.type, "conveyor.org.id": job.orgId },
      },
      job.traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: job.traceParent }) : ROOT_CONTEXT,
    ),
  );
  return (error) => {
    for (const span of spans) {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      span.end();
    }
  };
}
