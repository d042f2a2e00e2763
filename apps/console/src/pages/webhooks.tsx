// Webhook endpoints (docs/reference/events.md#events, owners and admins): create one (its signing secret shown once), edit it, rotate the
// secret, delete, and read each endpoint's recent deliveries (webhook-deliveries.tsx), where an event can be sent
// again and a test event sent. URLs are shown as text, never as links.
import { Badge, Button, Group, Modal, Stack, Table, Text } from "@mantine/core";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { Confirm, ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { formErrors, type FormErrors } from "../ui/form";
import { Time } from "../ui/format";
import { ShownOnce, ShownOnceModal } from "../ui/secret";
import { ActionsHeader, DangerButton, ListTable, QueryList, RowButtons } from "../ui/list";
import { Heading, OwnersAndAdminsOnly } from "../ui/page";
import { canManageTeam, useSession } from "../session";
import { useAction } from "../data/actions";
import { Deliveries } from "./webhook-deliveries";
import { EditEndpoint, EndpointFields, endpointProblems, type EventType } from "./webhook-edit";
import { createEndpoint, deleteEndpoint, endpointsKey, endpointsRefresh, rotateSecret, useWebhookEndpoints } from "../data/webhooks";

type Endpoint = ResponseBody<"/webhook-endpoints", "get">[number];

// Every event type the API offers, in this order: `satisfies` makes a type added to the API a compile error here
// until it is listed (job.updated was missing: an endpoint for M-Pesa callbacks could not be made in the console).
const EVENT_TYPE_ORDER = {
  "*": 0,
  "job.created": 1,
  "job.started": 2,
  "job.retrying": 3,
  "job.succeeded": 4,
  "job.failed": 5,
  "job.cancelled": 6,
  "job.updated": 7,
  "job.progress": 8,
  "job.output": 9,
  "waitpoint.completed": 10,
  "waitpoint.expired": 11,
  "waitpoint.cancelled": 12,
} satisfies Record<EventType, number>;
const EVENT_TYPES = Object.keys(EVENT_TYPE_ORDER) as EventType[];

const eventsLabel = (events: readonly string[]) => (events.includes("*") ? "All events" : events.join(", "));

/** Why deliveries stopped (disabled after days of failures) or are failing now: owners see it at the endpoint. */
function EndpointHealth({ endpoint }: { endpoint: Endpoint }) {
  if (endpoint.disabled_at) {
    return (
      <Text size="xs" c="red.9" style={{ wordBreak: "break-word" }} data-testid="endpoint-disabled">
        Disabled <Time iso={endpoint.disabled_at} />
        {endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ""}
      </Text>
    );
  }
  if (endpoint.failing_since) {
    return (
      <Text size="xs" c="red.9">
        Failing since <Time iso={endpoint.failing_since} />
      </Text>
    );
  }
  return null;
}

export function WebhooksPage() {
  const session = useSession();
  const allowed = canManageTeam(session.role);
  const endpoints = useWebhookEndpoints({ enabled: allowed });
  const [creating, setCreating] = useState(false);
  const deleting = useConfirmedAction<Endpoint>({
    queryKey: endpointsKey,
    failed: "Could not delete the endpoint",
    run: async (endpoint) => {
      await deleteEndpoint(endpoint.id);
      return "Endpoint deleted.";
    },
  });
  const [rotating, setRotating] = useState<Endpoint | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<Endpoint | null>(null);
  const [editing, setEditing] = useState<Endpoint | null>(null);
  const rotation = useAction({
    run: (endpoint: Endpoint) => rotateSecret(endpoint.id),
    failed: "Could not rotate the secret",
    refresh: endpointsRefresh,
    onSuccess: (rotated) => {
      setSecret(rotated.secret);
      setRotating(null);
    },
  });

  if (!allowed) {
    return <OwnersAndAdminsOnly title="Webhooks">Ask an owner or an admin of {session.org.name} to manage webhook endpoints.</OwnersAndAdminsOnly>;
  }

  return (
    <Stack>
      <Heading action={<Button onClick={() => setCreating(true)}>Add endpoint</Button>}>Webhooks</Heading>
      <Text c="dimmed" size="sm">
        Conveyor POSTs each matching job event to your endpoints as a CloudEvent, signed with Standard Webhooks headers.
      </Text>
      <QueryList
        query={endpoints}
        loading="Loading endpoints…"
        empty={{ title: "No webhook endpoints yet", children: "Add one to hear about jobs as they start, succeed, fail or are cancelled." }}
      >
        {(rows) => (
          <ListTable
            label="Webhook endpoints"
            minWidth={720}
            head={
              <>
                <Table.Th>URL</Table.Th>
                <Table.Th visibleFrom="sm">Events</Table.Th>
                <Table.Th visibleFrom="sm">Created</Table.Th>
                <ActionsHeader />
              </>
            }
          >
            {rows.map((endpoint) => (
              <Table.Tr key={endpoint.id} data-endpoint={endpoint.url}>
                {/* Only the URL may break anywhere (where it must); the health line under it is prose and times. */}
                <Table.Td style={{ wordBreak: "normal" }}>
                  <Text size="sm" ff="monospace" style={{ overflowWrap: "anywhere" }}>
                    {endpoint.url}
                  </Text>
                  {endpoint.description && (
                    <Text size="xs" c="dimmed" style={{ wordBreak: "break-word" }}>
                      {endpoint.description}
                    </Text>
                  )}
                  <Text size="xs" c="dimmed" hiddenFrom="sm">
                    {eventsLabel(endpoint.events)}
                  </Text>
                  <EndpointHealth endpoint={endpoint} />
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  <Group gap={4}>
                    {endpoint.events.map((type) => (
                      <Badge key={type} variant="filled" color="indigo.8" size="sm" tt="none">
                        {type === "*" ? "all events" : type}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  <Time iso={endpoint.created_at} />
                </Table.Td>
                <Table.Td>
                  <RowButtons>
                    <Button size="xs" variant="light" onClick={() => setDeliveries(endpoint)}>
                      Deliveries
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setEditing(endpoint)}>
                      Edit
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setRotating(endpoint)}>
                      Rotate secret
                    </Button>
                    <DangerButton onClick={() => deleting.ask(endpoint)}>Delete</DangerButton>
                  </RowButtons>
                </Table.Td>
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      <CreateEndpoint opened={creating} onClose={() => setCreating(false)} />
      {/* The open endpoint as the list has it now (an edit shows at once). */}
      <Deliveries endpoint={endpoints.data?.find((e) => e.id === deliveries?.id) ?? deliveries} eventTypes={EVENT_TYPES} onClose={() => setDeliveries(null)} />
      <EditEndpoint endpoint={editing} eventTypes={EVENT_TYPES} onClose={() => setEditing(null)} />
      <ConfirmAction action={deleting} title="Delete this endpoint?" confirmLabel="Delete">
        No more events are sent to it; deliveries in flight stop.
      </ConfirmAction>
      <Confirm
        opened={rotating !== null}
        title="Rotate the signing secret?"
        confirmLabel="Rotate"
        color="yellow"
        loading={rotation.isPending}
        onConfirm={() => rotating && rotation.mutate(rotating)}
        onClose={() => setRotating(null)}
      >
        Deliveries are signed with a new secret from now on; update your receiver with it.
      </Confirm>
      <Modal opened={secret !== null} onClose={() => setSecret(null)} title="The new signing secret" centered>
        {secret && <ShownOnce label="Signing secret" value={secret} note="Copy it now: it is shown only once." />}
      </Modal>
    </Stack>
  );
}

function CreateEndpoint({ opened, onClose }: { opened: boolean; onClose(): void }) {
  const [values, setValues] = useState<{ url: string; events: EventType[]; description: string }>({ url: "", events: ["*"], description: "" });
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [secret, setSecret] = useState<string | null>(null);
  const creating = useAction({
    run: createEndpoint,
    failed: "Could not add the endpoint",
    shownAt: (error) => setErrors(formErrors(error, ["url", "events", "description"], { webhook_url_taken: "url" })),
    refresh: endpointsRefresh,
    onSuccess: (created) => setSecret(created.secret),
  });
  const close = () => {
    setValues({ url: "", events: ["*"], description: "" });
    setErrors({ fields: {} });
    setSecret(null);
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const url = values.url.trim();
    const local = endpointProblems(values);
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    creating.mutate({ url, events: values.events, ...(values.description.trim() ? { description: values.description.trim() } : {}) });
  };
  return (
    <ShownOnceModal
      opened={opened}
      onClose={close}
      title="Add a webhook endpoint"
      shown={
        secret
          ? { title: "Endpoint added", label: "Signing secret", value: secret, note: "Verify deliveries with it (Standard Webhooks). It is shown only once." }
          : null
      }
      formError={errors.form}
      busy={creating.isPending}
      submitLabel="Add endpoint"
      onSubmit={submit}
    >
      <EndpointFields
        values={values}
        onChange={setValues}
        errors={errors.fields}
        eventTypes={EVENT_TYPES}
        urlPlaceholder="https://example.com/hooks/conveyor"
      />
    </ShownOnceModal>
  );
}
