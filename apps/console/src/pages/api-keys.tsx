// API keys (docs/reference/tenants.md#authentication): create one (shown once, with a copy button), see every key with who created it and its last
// use, revoke.
import { Button, Stack, Table, Text, TextInput } from "@mantine/core";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { formErrors, type FormErrors } from "../ui/form";
import { Email, Time } from "../ui/format";
import { ShownOnceModal } from "../ui/secret";
import { ActionsHeader, DangerButton, ListTable, QueryList } from "../ui/list";
import { Heading } from "../ui/page";
import { useSession } from "../session";
import { useAction } from "../data/actions";
import { apiKeysKey, apiKeysRefresh, createApiKey, revokeApiKey, useApiKeys } from "../data/api-keys";

type ApiKey = ResponseBody<"/api-keys", "get">[number];

export function ApiKeysPage() {
  const session = useSession();
  const createdBy = (key: ApiKey, you: string) => (key.created_by === session.user.id ? you : <Email address={key.created_by_email} />);
  const keys = useApiKeys();
  const [creating, setCreating] = useState(false);
  const revoking = useConfirmedAction<ApiKey>({
    queryKey: apiKeysKey,
    failed: "Could not revoke the key",
    run: async (key) => {
      await revokeApiKey(key.id);
      return `Key “${key.name}” revoked.`;
    },
  });

  return (
    <Stack>
      <Heading action={<Button onClick={() => setCreating(true)}>Create key</Button>}>API keys</Heading>
      <Text c="dimmed" size="sm">
        Services enqueue and read jobs with a key (header <code>X-API-Key</code>); keys cannot manage the team or other keys.
      </Text>
      <QueryList query={keys} loading="Loading keys…" empty={{ title: "No API keys yet", children: "Create one for each service that enqueues jobs." }}>
        {(rows) => (
          <ListTable
            label="API keys"
            minWidth={560}
            head={
              <>
                <Table.Th>Name</Table.Th>
                <Table.Th visibleFrom="sm">Key</Table.Th>
                <Table.Th visibleFrom="sm">Created</Table.Th>
                <Table.Th visibleFrom="sm">Created by</Table.Th>
                <Table.Th>Last used</Table.Th>
                <ActionsHeader />
              </>
            }
          >
            {rows.map((key) => (
              <Table.Tr key={key.id}>
                <Table.Td style={{ overflowWrap: "break-word" }}>
                  {key.name}
                  {/* A phone shows who made it under the name instead of in a column of its own. */}
                  <Text size="xs" c="dimmed" hiddenFrom="sm">
                    by {createdBy(key, "you")}
                  </Text>
                </Table.Td>
                <Table.Td ff="monospace" visibleFrom="sm">
                  {key.prefix}…
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  <Time iso={key.created_at} />
                </Table.Td>
                <Table.Td visibleFrom="sm">{createdBy(key, "You")}</Table.Td>
                <Table.Td>{key.last_used_at ? <Time iso={key.last_used_at} /> : "Never"}</Table.Td>
                <Table.Td>
                  <DangerButton onClick={() => revoking.ask(key)} aria-label={`Revoke ${key.name}`}>
                    Revoke
                  </DangerButton>
                </Table.Td>
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      <CreateKey opened={creating} onClose={() => setCreating(false)} />
      <ConfirmAction action={revoking} title="Revoke this key?" confirmLabel="Revoke">
        Services using “{revoking.target?.name}” are refused within seconds. This cannot be undone.
      </ConfirmAction>
    </Stack>
  );
}

function CreateKey({ opened, onClose }: { opened: boolean; onClose(): void }) {
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [created, setCreated] = useState<string | null>(null);
  const creating = useAction({
    run: createApiKey,
    failed: "Could not create the key",
    shownAt: (error) => setErrors(formErrors(error, ["name"])),
    refresh: apiKeysRefresh,
    onSuccess: (key) => setCreated(key.key),
  });
  const close = () => {
    setName("");
    setErrors({ fields: {} });
    setCreated(null);
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 100) return setErrors({ fields: { name: trimmed ? "must be at most 100 characters long" : "is required" } });
    creating.mutate(trimmed);
  };
  return (
    <ShownOnceModal
      opened={opened}
      onClose={close}
      title="Create an API key"
      shown={
        created
          ? {
              title: "Your new key",
              label: "API key",
              value: created,
              note: "Copy it now: it is shown only once. Store it as a secret of the service that uses it.",
            }
          : null
      }
      formError={errors.form}
      busy={creating.isPending}
      submitLabel="Create key"
      onSubmit={submit}
    >
      <TextInput
        label="Name"
        description="Which service uses it, e.g. billing-service."
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={errors.fields.name}
        data-autofocus
        required
      />
    </ShownOnceModal>
  );
}
