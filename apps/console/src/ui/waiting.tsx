// Why a pending job has not started (`waiting_for`, docs/reference/flow-control.md#flow-control), in words: a few for the jobs list, a sentence for the
// job's page. The reasons are WAITING_REASONS of @conveyor/contracts; one this console does not know yet is shown as
// the API named it rather than hidden.
import { Text } from "@mantine/core";
import { formatTime } from "./format";
import { RouterAnchor } from "./link";

type Waiting = {
  status: string;
  type: string;
  waiting_for?: string | null;
  run_at?: string | null;
  rate_limit?: string | null;
  concurrency_key?: string | null;
  concurrency_limit?: number | null;
};

const SHORT: Record<string, string> = {
  dependencies: "Waiting for the jobs it depends on",
  run_at: "Scheduled for later",
  retry: "Waiting to retry",
  queue_paused: "Its queue is paused",
  rate_limit: "Held by a rate limit",
  concurrency_key: "Held by its concurrency key",
  org_concurrency: "At your cap of running jobs",
  no_worker: "No worker serves this type",
  capacity: "Waiting for a free worker",
};

/** A few words for a list row; null unless the job is pending with a reason. */
export function waitingShort(job: Waiting): string | null {
  if (job.status !== "pending" || !job.waiting_for) return null;
  return SHORT[job.waiting_for] ?? `Waiting: ${job.waiting_for}`;
}

/** The sentence for the job's page. */
export function waitingSentence(job: Waiting): string | null {
  if (job.status !== "pending" || !job.waiting_for) return null;
  switch (job.waiting_for) {
    case "dependencies":
      return "It waits for the jobs it depends on to succeed.";
    case "run_at":
      return `It is scheduled to run at ${formatTime(job.run_at)}.`;
    case "retry":
      return `Its last attempt failed; the next one is due at ${formatTime(job.run_at)}.`;
    case "queue_paused":
      return `The ${job.type} queue is paused for your organization: it starts once the queue is resumed.`;
    case "rate_limit":
      return job.rate_limit
        ? `Its rate limit “${job.rate_limit}” (or its queue's) has no start left in the current window: it starts when the window has room.`
        : "A rate limit of its queue (or the deployment's for this type) has no start left in the current window: it starts when the window has room.";
    case "concurrency_key":
      return `${job.concurrency_limit ?? 1} job${(job.concurrency_limit ?? 1) === 1 ? "" : "s"} with its concurrency key “${job.concurrency_key ?? ""}” already running: it starts when one finishes.`;
    case "org_concurrency":
      return `Your organization's cap on running ${job.type} jobs is reached: it starts when one of them finishes.`;
    case "no_worker":
      return `No running worker serves ${job.type}: it starts once a worker that handles the type is running.`;
    case "capacity":
      return "It is due and waits for a free worker slot.";
    default:
      return `It is waiting (${job.waiting_for}).`;
  }
}

/** The reason under a pending row's status, in small type. */
export function WaitingNote({ job }: { job: Waiting }) {
  const words = waitingShort(job);
  if (!words) return null;
  return (
    <Text size="xs" c="dimmed" data-waiting-for={job.waiting_for} mt={2}>
      {words}
    </Text>
  );
}

/** The reason on the job's page, with the way to the queue when it is the queue's doing. */
export function WaitingReason({ job }: { job: Waiting }) {
  const sentence = waitingSentence(job);
  if (!sentence) return null;
  const queueReason = ["queue_paused", "rate_limit", "org_concurrency", "no_worker"].includes(job.waiting_for ?? "");
  return (
    <Text size="sm" data-testid="waiting-for" data-waiting-for={job.waiting_for}>
      <Text span fw={600}>
        Why it has not started:
      </Text>{" "}
      {sentence}
      {queueReason && (
        <>
          {" "}
          <RouterAnchor to="/queues" size="sm">
            See the queues
          </RouterAnchor>
        </>
      )}
    </Text>
  );
}
