// "Test run" (issue 48; Trigger.dev's and Hatchet's test runs): start a job of any type from the console with a payload
// written in an editor, checked as it is typed (JSON at all) and by the API against the type's schema when sent — a
// payload the type refuses is stored as nothing (POST /jobs is all or nothing) and each field's refusal is shown under
// the editor, by the field's name. Built-in types start from their template; an organization's own types (plugins, once
// they exist) are chosen by name. A job that is made opens its page.
import { Alert, Autocomplete, Button, Group, List, Modal, Stack, Text, Textarea } from "@mantine/core";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { BUILT_IN_JOB_TYPES, BUILT_IN_PAYLOAD_TEMPLATES, type BuiltInJobType } from "@conveyor/client";
import { ApiError } from "../api";
import { useAction } from "../data/actions";
import { enqueueJob, enqueueRefresh } from "../data/jobs";
import { shortId } from "../ui/format";
import { pathInWords } from "./schedule-errors";

const template = (type: string) => JSON.stringify((BUILT_IN_PAYLOAD_TEMPLATES as Record<string, unknown>)[type as BuiltInJobType] ?? {}, null, 2);

/** The editor's text as a payload, or why it is not one. */
function parsePayload(text: string): { payload: Record<string, unknown> } | { problem: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) return { problem: "A payload is a JSON object ({ … })." };
    return { payload: value as Record<string, unknown> };
  } catch (error) {
    return { problem: `Not valid JSON: ${(error as Error).message}` };
  }
}

export function TestRun({ types = [] }: { types?: readonly string[] }) {
  const [opened, setOpened] = useState(false);
  const [type, setType] = useState<string>(BUILT_IN_JOB_TYPES[0]);
  const [text, setText] = useState(template(BUILT_IN_JOB_TYPES[0]));
  const [refusals, setRefusals] = useState<string[]>([]);
  const navigate = useNavigate();
  const parsed = parsePayload(text);
  const run = useAction({
    run: enqueueJob,
    done: (job) => `Test run started: job ${shortId(job.id)}.`,
    failed: "The test run was not started",
    shownAt: (error) =>
      setRefusals(
        error instanceof ApiError && error.details.length
          ? error.details.map((d) => `${pathInWords(d.path.replace(/^(body\.)?payload\.?/, "") || "payload")} ${d.message}`)
          : [error.message],
      ),
    refresh: enqueueRefresh,
    onSuccess: (job) => {
      setOpened(false);
      void navigate({ to: "/jobs/$id", params: { id: job.id } });
    },
  });
  const choose = (next: string) => {
    setType(next);
    setRefusals([]);
    if ((BUILT_IN_JOB_TYPES as readonly string[]).includes(next)) setText(template(next));
  };
  const allTypes = [...new Set([...BUILT_IN_JOB_TYPES, ...types])];
  return (
    <>
      <Button variant="default" size="xs" onClick={() => setOpened(true)}>
        Test run…
      </Button>
      <Modal opened={opened} onClose={() => !run.isPending && setOpened(false)} title="Start a test run" size="lg">
        <Stack>
          <Autocomplete label="Job type" data={allTypes} value={type} onChange={choose} comboboxProps={{ withinPortal: true }} />
          <Textarea
            label="Payload (JSON)"
            description="Checked by the API against the type's schema when you start it; nothing is stored if it is refused."
            value={text}
            onChange={(event) => {
              setText(event.currentTarget.value);
              setRefusals([]);
            }}
            autosize
            minRows={6}
            maxRows={16}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
            error={"problem" in parsed ? parsed.problem : undefined}
            spellCheck={false}
          />
          {refusals.length > 0 && (
            <Alert color="red" title={`${type} refused this payload`} role="alert" data-testid="test-run-refusals">
              <List size="sm">
                {refusals.map((refusal) => (
                  <List.Item key={refusal}>{refusal}</List.Item>
                ))}
              </List>
            </Alert>
          )}
          <Text size="xs" c="dimmed">
            A test run is a real job: it runs on a worker like any other (an e-mail is sent, a webhook posted).
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpened(false)} data-autofocus>
              Close
            </Button>
            <Button
              loading={run.isPending}
              disabled={"problem" in parsed || !type}
              onClick={() => "payload" in parsed && run.mutate({ type, payload: parsed.payload })}
            >
              Start {type}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
