// Replay with an edited payload (issue 23): the job's payload in an editable box, sent as POST /jobs/{id}/replay's
// `payload`, which the API checks as POST /jobs checks a payload; its refusals are shown by path beside the box.
// Opens on the new job once it is created.
import { Alert, Button, Group, List, Modal, Stack, Text, Textarea } from "@mantine/core";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { ApiError, type FieldError } from "../api";
import { replayRefresh, replayWithPayload, useJobDetail } from "../data/job-detail";
import { useAction } from "../data/actions";

const TYPE_WORDS: Record<string, string> = {
  object: "an object ({ … })",
  array: "a list ([ … ])",
  string: "text in double quotes",
  number: "a number",
  boolean: "true or false",
};

/**
 * A refusal of the edited payload in the words of the box it is about (issue 38 #9): the API names fields from the
 * request's body (`payload.payload`, `payload.items.0.sku`), but the box holds the payload itself, so its own
 * `payload.` is dropped and the field named as the JSON in the box spells it; Joi's "must be of type object" is
 * said as the JSON to write.
 */
export function payloadProblem(problem: FieldError): { field: string | null; message: string } {
  const inBox = problem.path === "payload" ? "" : problem.path.startsWith("payload.") ? problem.path.slice("payload.".length) : problem.path;
  const message = problem.message.replace(/^must be of type (\w+)$/, (whole, type: string) => (TYPE_WORDS[type] ? `must be ${TYPE_WORDS[type]}` : whole));
  return { field: inBox || null, message };
}

/** A JSON value's leaves by dotted path (an empty object or list is a leaf of its own). */
function leaves(value: unknown, path = "", into = new Map<string, string>()): Map<string, string> {
  if (value !== null && typeof value === "object" && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value)) leaves(child, path ? `${path}.${key}` : key, into);
  } else into.set(path, JSON.stringify(value));
  return into;
}

export type PayloadChange = { path: string; before?: string; after?: string };

/** What the edited payload changes from the original, field by field (issue 38: the diff in "replay with changes"). */
export function payloadChanges(original: unknown, edited: unknown): PayloadChange[] {
  const before = leaves(original);
  const after = leaves(edited);
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  return paths.filter((path) => before.get(path) !== after.get(path)).map((path) => ({ path, before: before.get(path), after: after.get(path) }));
}

/** The edited text's changes from the original, or null while it is not JSON. */
function editedChanges(original: unknown, text: string): PayloadChange[] | null {
  try {
    return payloadChanges(original, JSON.parse(text));
  } catch {
    return null;
  }
}

export function ReplayDialog(props: { jobId: string | null; onClose(): void }) {
  const { jobId } = props;
  const navigate = useNavigate();
  const job = useJobDetail(jobId);
  const [text, setText] = useState("");
  const [problems, setProblems] = useState<FieldError[]>([]);
  const replaying = useAction({
    run: replayWithPayload,
    done: (replay) => ({ title: "Replayed with the edited payload", message: `The new job is ${replay.status}.` }),
    failed: "Could not replay",
    // The refusal is read at the payload box, in its words.
    shownAt: (error) => {
      if (error instanceof ApiError && error.details.length) setProblems(error.details);
      else setProblems([{ path: "", message: `was not replayed: ${error.message}` }]);
    },
    // The original now lists its replay (replayed_as), and the lists have a new job.
    refresh: ({ id }) => replayRefresh(id),
    onSuccess: (replay) => {
      props.onClose();
      void navigate({ to: "/jobs/$id", params: { id: replay.id } });
    },
  });
  const busy = replaying.isPending;
  useEffect(() => {
    setProblems([]);
    if (job.data) setText(JSON.stringify(job.data.payload, null, 2));
  }, [job.data]);

  const submit = () => {
    if (!jobId) return;
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(text) as Record<string, unknown>;
      if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new Error("not an object");
    } catch {
      setProblems([{ path: "payload", message: "must be a JSON object ({ … }): check the commas, quotes and braces" }]);
      return;
    }
    replaying.mutate({ id: jobId, payload });
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
        <ChangesFromOriginal changes={job.data ? editedChanges(job.data.payload, text) : []} />
        {problems.length > 0 && (
          <Alert color="red" title="Not replayed" data-testid="replay-problems">
            <List size="sm">
              {problems.map((p) => {
                const { field, message } = payloadProblem(p);
                return (
                  <List.Item key={`${p.path}:${p.message}`}>
                    {field ? (
                      <>
                        The field <code>{field}</code> {message}
                      </>
                    ) : (
                      <>The payload {message}</>
                    )}
                  </List.Item>
                );
              })}
            </List>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose} disabled={busy}>
            Keep it
          </Button>
          <Button onClick={submit} loading={busy} disabled={!job.data}>
            Replay
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The edited payload against the original: each changed field, its old value struck through and its new one. */
function ChangesFromOriginal({ changes }: { changes: PayloadChange[] | null }) {
  if (changes === null)
    return (
      <Text size="sm" c="dimmed">
        Not JSON yet: the changes show once it is.
      </Text>
    );
  if (changes.length === 0)
    return (
      <Text size="sm" c="dimmed" data-testid="replay-changes">
        No change from the original payload yet.
      </Text>
    );
  return (
    <Stack gap={4} data-testid="replay-changes" aria-label="Changes from the original payload" role="group">
      <Text size="sm" fw={600}>
        Changed from the original
      </Text>
      <List size="sm" spacing={2}>
        {changes.map((change) => (
          <List.Item key={change.path} style={{ overflowWrap: "anywhere" }}>
            <code>{change.path || "payload"}</code>:{" "}
            {change.before === undefined ? (
              <>added {change.after}</>
            ) : change.after === undefined ? (
              <>
                removed <del>{change.before}</del>
              </>
            ) : (
              <>
                <del aria-label={`was ${change.before}`}>{change.before}</del> → <ins style={{ textDecoration: "none", fontWeight: 600 }}>{change.after}</ins>
              </>
            )}
          </List.Item>
        ))}
      </List>
    </Stack>
  );
}
