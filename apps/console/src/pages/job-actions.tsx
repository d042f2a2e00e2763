// What can be done to a job from its page: run it now (due later), cancel it (unfinished), replay it as it was or
// with changes (finished) — a cancel and a replay asked first.
import { Button, Group, Text } from "@mantine/core";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { useJobActions, type Job } from "../data/job-detail";
import { Confirm } from "../ui/confirm";
import { FINAL_STATUSES } from "../ui/format";
import { ReplayDialog } from "./replay-dialog";

export function JobActions({ job }: { job: Job }) {
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  // A replay runs the job again — its webhook is sent again, its e-mail too: asked first (issue 48 #5).
  const [replaying, setReplaying] = useState(false);
  const final = FINAL_STATUSES.includes(job.status);
  // Due later (its run_at, or a retry's wait): it can be run now (issue 38).
  const delayed = job.status === "pending" && (job.waiting_for === "run_at" || job.waiting_for === "retry");
  const { cancel, replay, runNow } = useJobActions(job, {
    cancelled: () => setConfirming(false),
    replayed: (created) => {
      setReplaying(false);
      void navigate({ to: "/jobs/$id", params: { id: created.id } });
    },
  });
  const busy = cancel.isPending || replay.isPending || runNow.isPending;

  return (
    <Group gap="xs">
      {delayed && (
        <Button variant="default" onClick={() => runNow.mutate(undefined)} loading={runNow.isPending}>
          {job.waiting_for === "retry" ? "Retry now" : "Run now"}
        </Button>
      )}
      {!final && (
        <Button color="red.9" variant="outline" onClick={() => setConfirming(true)} disabled={Boolean(job.cancel_requested_at)}>
          {job.cancel_requested_at ? "Cancelling…" : "Cancel job"}
        </Button>
      )}
      {final && (
        <>
          <Button variant="default" onClick={() => setEditing(true)} disabled={busy}>
            Replay with changes…
          </Button>
          <Button onClick={() => setReplaying(true)} loading={replay.isPending}>
            Replay…
          </Button>
        </>
      )}
      <ReplayDialog jobId={editing ? job.id : null} onClose={() => setEditing(false)} />
      <Confirm
        opened={replaying}
        title="Replay this job?"
        confirmLabel="Replay"
        color="blue"
        loading={replay.isPending}
        onConfirm={() => replay.mutate(undefined)}
        onClose={() => !replay.isPending && setReplaying(false)}
      >
        <Text size="sm" data-testid="replay-warning">
          A new {job.type} job runs with the same payload: whatever it does happens again (a webhook is sent, a message goes out).
          {job.replayed_as.length > 0 && (
            <>
              {" "}
              <strong>It was already replayed {job.replayed_as.length === 1 ? "once" : `${job.replayed_as.length} times`}.</strong>
            </>
          )}
        </Text>
      </Confirm>
      <Confirm
        opened={confirming}
        title="Cancel this job?"
        confirmLabel="Cancel job"
        loading={cancel.isPending}
        onConfirm={() => cancel.mutate(undefined)}
        onClose={() => setConfirming(false)}
      >
        {job.status === "processing" ? "The worker running it is told to stop; it ends cancelled unless it finishes first." : "It will never run."}
      </Confirm>
    </Group>
  );
}
