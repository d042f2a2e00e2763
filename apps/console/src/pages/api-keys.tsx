// API keys (SPEC §3): create one (shown once, with a copy button), see every key with who created it and its last
// use, revoke.
import { Button, Group, Paper, ScrollArea, Stack, Table, Text, TextInput, Title, VisuallyHidden } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { Confirm, useConfirmedAction } from "../ui/confirm";
import { formErrors, type FormErrors } from "../ui/form";
import { Email, Time } from "../ui/format";
import { ShownOnceModal } from "../ui/secret";
import { ErrorState, Empty, Loading } from "../ui/states";
import { useSession } from "../session";
import { useAction } from "../data/actions";
import { keys as queryKeys } from "../data/keys";

type ApiKey = ResponseBody<"/api-keys", "get">[number];

export function ApiKeysPage() {
  const session = useSession();
  const createdBy = (key: ApiKey, you: string) => (key.created_by === session.user.id ? you : <Email address={key.created_by_email} />);
  const keys = useQuery({ queryKey: queryKeys.apiKeys.all, queryFn: () => call(api.GET("/api-keys")) });
  const [creating, setCreating] = useState(false);
  const revoking = useConfirmedAction<ApiKey>({
    queryKey: queryKeys.apiKeys.all,
    failed: "Could not revoke the key",
    run: async (key) => {
      await call(api.DELETE("/api-keys/{id}", { params: { path: { id: key.id } } }));
      return `Key “${key.name}” revoked.`;
    },
  });

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          API keys
        </Title>
        <Button onClick={() => setCreating(true)}>Create key</Button>
      </Group>
      <Text c="dimmed" size="sm">
        Services enqueue and read jobs with a key (header <code>X-API-Key</code>); keys cannot manage the team or other keys.
      </Text>
      {keys.isPending ? (
        <Loading label="Loading keys…" />
      ) : keys.isError ? (
        <ErrorState error={keys.error} retry={() => void keys.refetch()} />
      ) : keys.data.length === 0 ? (
        <Empty title="No API keys yet">Create one for each service that enqueues jobs.</Empty>
      ) : (
        <Paper withBorder>
          <ScrollArea type="auto">
            <Table miw={{ base: 0, sm: 560 }} aria-label="API keys">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th visibleFrom="sm">Key</Table.Th>
                  <Table.Th visibleFrom="sm">Created</Table.Th>
                  <Table.Th visibleFrom="sm">Created by</Table.Th>
                  <Table.Th>Last used</Table.Th>
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {keys.data.map((key) => (
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
                      <Button size="xs" color="red.9" variant="outline" onClick={() => revoking.ask(key)} aria-label={`Revoke ${key.name}`}>
                        Revoke
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollArea>
        </Paper>
      )}
      <CreateKey opened={creating} onClose={() => setCreating(false)} />
      <Confirm
        opened={revoking.target !== null}
        title="Revoke this key?"
        confirmLabel="Revoke"
        loading={revoking.busy}
        onConfirm={() => void revoking.confirm()}
        onClose={revoking.cancel}
      >
        Services using “{revoking.target?.name}” are refused within seconds. This cannot be undone.
      </Confirm>
    </Stack>
  );
}

function CreateKey({ opened, onClose }: { opened: boolean; onClose(): void }) {
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [created, setCreated] = useState<string | null>(null);
  const creating = useAction({
    run: (name: string) => call(api.POST("/api-keys", { body: { name } })),
    failed: "Could not create the key",
    shownAt: (error) => setErrors(formErrors(error, ["name"])),
    refresh: () => [queryKeys.apiKeys.all],
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
