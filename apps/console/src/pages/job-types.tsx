// Job types (docs/reference/lifecycle.md#your-own-workers): your organization's own types, run by your own workers over the worker protocol — each one's
// description, the JSON Schema its payloads are checked against, its defaults; owners and admins register and delete
// them. Members see the list.
import { Button, Code, Modal, NumberInput, Stack, Table, Text, Textarea, TextInput } from "@mantine/core";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { useAction } from "../data/actions";
import { deleteJobType, jobTypesKey, jobTypesRefresh, registerJobType, useJobTypes } from "../data/job-types";
import { canManageTeam, useSession } from "../session";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { formErrors, type FormErrors } from "../ui/form";
import { FormAlert, FormButtons } from "../ui/form-parts";
import { Time } from "../ui/format";
import { ActionsHeader, DangerButton, ListTable, QueryList } from "../ui/list";
import { Heading } from "../ui/page";

type JobType = ResponseBody<"/job-types", "get">[number];

export function JobTypesPage() {
  const session = useSession();
  const manages = canManageTeam(session.role);
  const types = useJobTypes();
  const [registering, setRegistering] = useState(false);
  const deleting = useConfirmedAction<JobType>({
    queryKey: jobTypesKey,
    failed: "Could not delete the type",
    run: async (type) => {
      await deleteJobType(type.name);
      return `Job type “${type.name}” deleted.`;
    },
  });

  return (
    <Stack>
      <Heading action={manages ? <Button onClick={() => setRegistering(true)}>Register type</Button> : undefined}>Job types</Heading>
      <Text c="dimmed" size="sm">
        Your organization&apos;s own job types, run by your own workers (the Python SDK, <code>createWorker</code>, or any HTTP client) with an API key of the
        worker role. Each job&apos;s payload is checked against the type&apos;s JSON Schema when it is posted.
      </Text>
      <QueryList
        query={types}
        loading="Loading job types…"
        empty={{ title: "No job types of your own yet", children: "Register one, then run a worker for it: see the README's “Your own workers”." }}
      >
        {(rows) => (
          <ListTable
            label="Job types"
            minWidth={560}
            head={
              <>
                <Table.Th>Name</Table.Th>
                <Table.Th>Payload schema</Table.Th>
                <Table.Th visibleFrom="sm">Defaults</Table.Th>
                <Table.Th visibleFrom="sm">Updated</Table.Th>
                {manages && <ActionsHeader />}
              </>
            }
          >
            {rows.map((type) => (
              <Table.Tr key={type.name} data-job-type={type.name}>
                <Table.Td style={{ overflowWrap: "anywhere" }}>
                  <Text ff="monospace" size="sm">
                    {type.name}
                  </Text>
                  {type.description && (
                    <Text size="xs" c="dimmed">
                      {type.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td style={{ maxWidth: 360 }}>
                  {/* Scrolls when long: focusable, so a keyboard can scroll it too. */}
                  <Code
                    block
                    tabIndex={0}
                    aria-label={`Payload schema of ${type.name}`}
                    style={{ maxHeight: 160, overflow: "auto", whiteSpace: "pre-wrap", wordBreak: "break-word" }}
                    data-testid="payload-schema"
                  >
                    {JSON.stringify(type.payload_schema, null, 2)}
                  </Code>
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  <Text size="sm">{type.default_max_retries === null ? "0 retries" : `${type.default_max_retries} retries`}</Text>
                  <Text size="xs" c="dimmed">
                    {type.default_timeout_ms === null ? "deployment timeout" : `timeout ${type.default_timeout_ms / 1000} s`}
                  </Text>
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  <Time iso={type.updated_at} />
                </Table.Td>
                {manages && (
                  <Table.Td>
                    <DangerButton onClick={() => deleting.ask(type)} aria-label={`Delete ${type.name}`}>
                      Delete
                    </DangerButton>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      {manages && <RegisterType opened={registering} onClose={() => setRegistering(false)} />}
      <ConfirmAction action={deleting} title="Delete this job type?" confirmLabel="Delete">
        New jobs of “{deleting.target?.name}” are refused from then on; those already accepted still run on your workers.
      </ConfirmAction>
    </Stack>
  );
}

const EXAMPLE_SCHEMA = `{
  "type": "object",
  "properties": { "url": { "type": "string" }, "width": { "type": "integer", "minimum": 1 } },
  "required": ["url", "width"]
}`;

function RegisterType({ opened, onClose }: { opened: boolean; onClose(): void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [schema, setSchema] = useState(EXAMPLE_SCHEMA);
  const [retries, setRetries] = useState<number | string>("");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const close = () => {
    setName("");
    setDescription("");
    setSchema(EXAMPLE_SCHEMA);
    setRetries("");
    setErrors({ fields: {} });
    onClose();
  };
  const registering = useAction({
    run: registerJobType,
    done: (type) => `Job type “${type.name}” registered.`,
    failed: "Could not register the type",
    shownAt: (error) => setErrors(formErrors(error, ["name", "payload_schema", "description", "default_max_retries"], { job_type_taken: "name" })),
    refresh: jobTypesRefresh,
    onSuccess: close,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(schema);
    } catch (error) {
      return setErrors({ fields: { payload_schema: `is not JSON: ${(error as Error).message}` } });
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return setErrors({ fields: { payload_schema: "must be a JSON object" } });
    registering.mutate({
      name: name.trim(),
      ...(description.trim() ? { description: description.trim() } : {}),
      payload_schema: parsed as Record<string, unknown>,
      ...(typeof retries === "number" ? { default_max_retries: retries } : {}),
    });
  };
  return (
    <Modal opened={opened} onClose={close} title="Register a job type">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormAlert message={errors.form} />
          <TextInput
            label="Name"
            description="A lower-case letter, then a-z, 0-9 and _ (e.g. resize). Not a built-in type's."
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={errors.fields.name}
            data-autofocus
            required
          />
          <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} error={errors.fields.description} />
          <Textarea
            label="Payload schema"
            description="JSON Schema (draft 2020-12) every payload must fit."
            value={schema}
            onChange={(e) => setSchema(e.currentTarget.value)}
            error={errors.fields.payload_schema}
            autosize
            minRows={6}
            styles={{ input: { fontFamily: "monospace" } }}
            required
          />
          <NumberInput label="Default retries" min={0} max={25} value={retries} onChange={setRetries} error={errors.fields.default_max_retries} />
          <FormButtons onCancel={close} busy={registering.isPending}>
            Register
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}
