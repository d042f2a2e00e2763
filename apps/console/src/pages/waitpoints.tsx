// Open waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps): what the organization's jobs wait on, and a Complete action for every member — the
// data is JSON, checked here (valid, at most 64 KiB) before it is sent; the API checks it again.
import { Button, Modal, Stack, Table, Text, Textarea, Title } from "@mantine/core";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { Time } from "../ui/format";
import { useAction } from "../data/actions";
import { completeWaitpoint, useOpenWaitpoints, waitpointsRefresh } from "../data/waitpoints";
import { FormButtons } from "../ui/form-parts";
import { ActionsHeader, ListTable, QueryList } from "../ui/list";

type Waitpoint = ResponseBody<"/waitpoints", "get">[number];

const DATA_MAX_BYTES = 64 * 1024;

/** The editor's text as the completion's data, or what is wrong with it. */
export function parseData(text: string): { ok: true; data: unknown } | { ok: false; message: string } {
  if (new TextEncoder().encode(text).length > DATA_MAX_BYTES) return { ok: false, message: `Data must be at most ${DATA_MAX_BYTES / 1024} KiB of JSON.` };
  if (text.trim() === "") return { ok: true, data: null };
  try {
    return { ok: true, data: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `Not valid JSON: ${(error as Error).message}` };
  }
}

export function WaitpointsPage() {
  const open = useOpenWaitpoints();
  const [completing, setCompleting] = useState<Waitpoint | null>(null);

  return (
    <Stack>
      <Title order={1} size="h2">
        Waitpoints
      </Title>
      <Text c="dimmed" size="sm">
        Jobs wait on these until someone completes them; the data you give is what the waiting jobs receive.
      </Text>
      <QueryList
        query={open}
        loading="Loading waitpoints…"
        empty={{ title: "Nothing is waiting", children: "Waitpoints appear here while jobs wait on them." }}
      >
        {(rows) => (
          <ListTable
            label="Open waitpoints"
            head={
              <>
                <Table.Th>Description</Table.Th>
                <Table.Th visibleFrom="sm">Tags</Table.Th>
                <Table.Th visibleFrom="sm">Created</Table.Th>
                <Table.Th>Expires</Table.Th>
                <ActionsHeader />
              </>
            }
          >
            {rows.map((w) => (
              <Table.Tr key={w.id}>
                <Table.Td>{w.description ?? <Text c="dimmed">{w.job_id ? `Waited on by job …${w.job_id.slice(-8)}` : `…${w.id.slice(-8)}`}</Text>}</Table.Td>
                <Table.Td visibleFrom="sm">{w.tags.join(", ")}</Table.Td>
                <Table.Td visibleFrom="sm">
                  <Time iso={w.created_at} />
                </Table.Td>
                <Table.Td>
                  <Time iso={w.expires_at} />
                </Table.Td>
                <Table.Td>
                  <Button size="xs" variant="light" onClick={() => setCompleting(w)} aria-label={`Complete ${w.description ?? w.id}`}>
                    Complete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      {completing && <CompleteDialog waitpoint={completing} onClose={() => setCompleting(null)} onDone={() => setCompleting(null)} />}
    </Stack>
  );
}

function CompleteDialog({ waitpoint, onClose, onDone }: { waitpoint: Waitpoint; onClose(): void; onDone(): void }) {
  const [text, setText] = useState("{}");
  const [problem, setProblem] = useState<string | null>(null);
  const complete = useAction({
    run: (data: unknown) => completeWaitpoint({ id: waitpoint.id, data }),
    done: () => `Waitpoint “${waitpoint.description ?? waitpoint.id}” completed.`,
    failed: "Could not complete the waitpoint",
    shownAt: (error) => setProblem(error.message),
    refresh: waitpointsRefresh,
    onSuccess: () => onDone(),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseData(text);
    if (!parsed.ok) return setProblem(parsed.message);
    setProblem(null);
    complete.mutate(parsed.data);
  };
  return (
    <Modal opened onClose={onClose} title={`Complete “${waitpoint.description ?? waitpoint.id}”`}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Textarea
            label="Data (JSON)"
            description="What the waiting jobs receive. Any JSON value, up to 64 KiB."
            autosize
            minRows={4}
            styles={{ input: { fontFamily: "monospace" } }}
            value={text}
            onChange={(event) => setText(event.currentTarget.value)}
            error={problem}
          />
          <FormButtons onCancel={onClose} busy={complete.isPending}>
            Complete
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}
