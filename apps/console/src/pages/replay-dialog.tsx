// Replay with an edited payload (issue 23): the job's payload in an editable box, sent as POST /jobs/{id}/replay's
// `payload`, which the API checks as POST /jobs checks a payload; its refusals are shown by path beside the box.
// Opens on the new job once it is created.
import { Alert, Button, Group, List, Modal, Stack, Text, Textarea } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { ApiError, api, call, type FieldError } from "../api";
import { notify } from "../ui/notify";

export function ReplayDialog(props: { jobId: string | null; onClose(): void }) {
  const { jobId } = props;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const job = useQuery({
    queryKey: ["job", jobId],
    queryFn: () => call(api.GET("/jobs/{id}", { params: { path: { id: jobId! } } })),
    enabled: jobId !== null,
  });
  const [text, setText] = useState("");
  const [problems, setProblems] = useState<FieldError[]>([]);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setProblems([]);
    if (job.data) setText(JSON.stringify(job.data.payload, null, 2));
  }, [job.data]);

  const submit = async () => {
    if (!jobId) return;
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(text) as Record<string, unknown>;
      if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new Error("not an object");
    } catch {
      setProblems([{ path: "payload", message: "must be a JSON object" }]);
      return;
    }
    setBusy(true);
    try {
      const replay = await call(api.POST("/jobs/{id}/replay", { params: { path: { id: jobId } }, body: { payload } }));
      // The original now lists its replay (replayed_as), and the lists have a new job.
      void queryClient.invalidateQueries({ queryKey: ["job", jobId] });
      void queryClient.invalidateQueries({ queryKey: ["jobs"] });
      notify({ color: "green", title: "Replayed with the edited payload", message: `The new job is ${replay.status}.` });
      props.onClose();
      void navigate({ to: "/jobs/$id", params: { id: replay.id } });
    } catch (error) {
      if (error instanceof ApiError && error.details.length) setProblems(error.details);
      else setProblems([{ path: "", message: (error as Error).message }]);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal opened={jobId !== null} onClose={() => !busy && props.onClose()} title="Replay with an edited payload" size="lg" centered>
      <Stack>
        <Text size="sm">A new job of type {job.data?.type ?? "…"} runs with this payload; the original stays as it is and lists the replay.</Text>
        <Textarea
          label="Payload (JSON)"
          autosize
          minRows={6}
          maxRows={18}
          styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          value={text}
          onChange={(event) => setText(event.currentTarget.value)}
          disabled={!job.data}
          error={problems.length ? "The API did not accept this payload" : undefined}
          spellCheck={false}
        />
        {problems.length > 0 && (
          <Alert color="red" title="Not replayed" data-testid="replay-problems">
            <List size="sm">
              {problems.map((p) => (
                <List.Item key={`${p.path}:${p.message}`}>
                  {p.path ? `${p.path}: ` : ""}
                  {p.message}
                </List.Item>
              ))}
            </List>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose} disabled={busy}>
            Keep it
          </Button>
          <Button onClick={() => void submit()} loading={busy} disabled={!job.data}>
            Replay
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
