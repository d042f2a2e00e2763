// An endpoint's recent deliveries (owners and admins): each attempt's event and the job it is about (a link), what
// sent it, the receiver's status and the start of its answer, and a button to send the event again; a test event
// can be sent from here. The receiver's answer is shown as text, in a box that scrolls by keyboard too.
import { Badge, Button, Code, Drawer, Group, ScrollArea, Stack, Table, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { Time, shortId } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { useAction } from "../data/actions";
import { ErrorState, Empty, Loading } from "../ui/states";
import { keys } from "../data/keys";

type Endpoint = ResponseBody<"/webhook-endpoints", "get">[number];
type Delivery = ResponseBody<"/webhook-endpoints/{id}/deliveries", "get">[number];

const TRIGGER_LABELS: Record<Delivery["trigger"], string | null> = { event: null, redelivery: "sent again", test: "test event" };

/** The receiver's answer: status, why it failed, and the first KiB of its body when there was one. */
function Answer({ delivery }: { delivery: Delivery }) {
  const ok = delivery.status_code !== null && delivery.status_code >= 200 && delivery.status_code < 300;
  return (
    <Stack gap={4}>
      <Badge color={ok ? "green" : "red"} variant="dot" miw="max-content">
        {delivery.status_code ?? "no answer"}
      </Badge>
      {delivery.error && (
        <Text size="xs" c="dimmed" style={{ wordBreak: "break-word" }}>
          {delivery.error}
        </Text>
      )}
      {delivery.response_body ? (
        <details>
          <summary>
            <Text span size="xs">
              Response body{delivery.response_truncated ? " (first KiB)" : ""}
            </Text>
          </summary>
          <ScrollArea.Autosize mah={160} type="auto" tabIndex={0} aria-label={`Response body of delivery ${delivery.id}`}>
            <Code block style={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }} data-testid="response-body">
              {delivery.response_body}
            </Code>
          </ScrollArea.Autosize>
        </details>
      ) : delivery.status_code !== null ? (
        <Text size="xs" c="dimmed">
          Empty response body
        </Text>
      ) : null}
    </Stack>
  );
}

export function Deliveries({ endpoint, onClose }: { endpoint: Endpoint | null; onClose(): void }) {
  const queryKey = keys.webhookEndpoints.deliveries(endpoint?.id);
  const deliveries = useQuery({
    queryKey,
    queryFn: () => call(api.GET("/webhook-endpoints/{id}/deliveries", { params: { path: { id: endpoint!.id } } })),
    enabled: endpoint !== null,
    refetchInterval: 3000,
  });
  const sendAction = useAction({
    run: async ({ id, what }: { id: string; what: "test" | number }) => {
      if (what === "test") await call(api.POST("/webhook-endpoints/{id}/test", { params: { path: { id } } }));
      else await call(api.POST("/webhook-endpoints/{id}/redeliver", { params: { path: { id } }, body: { event_id: what } }));
    },
    done: (_, { what }) => ({
      title: what === "test" ? "Test event queued" : `Event ${what} queued again`,
      message: "Its delivery appears in this list in a few seconds.",
    }),
    failed: ({ what }) => (what === "test" ? "Could not send a test event" : "Could not send the event again"),
    refresh: () => [queryKey],
  });
  const sending = sendAction.isPending ? String(sendAction.variables?.what) : null;
  const send = (what: "test" | number) => endpoint && sendAction.mutate({ id: endpoint.id, what });

  return (
    <Drawer opened={endpoint !== null} onClose={onClose} title="Recent deliveries" position="right" size="xl">
      {endpoint && (
        <Group justify="space-between" align="flex-start" mb="sm" wrap="wrap" gap="xs">
          <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: "break-all", flex: "1 1 12rem" }}>
            {endpoint.url}
          </Text>
          <Button size="xs" variant="default" loading={sending === "test"} disabled={Boolean(endpoint.disabled_at)} onClick={() => send("test")}>
            Send test event
          </Button>
        </Group>
      )}
      {deliveries.isPending ? (
        <Loading label="Loading deliveries…" />
      ) : deliveries.isError ? (
        <ErrorState error={deliveries.error} retry={() => void deliveries.refetch()} />
      ) : deliveries.data.length === 0 ? (
        <Empty title="No deliveries yet">Deliveries appear here as matching events happen, or send a test event.</Empty>
      ) : (
        <ScrollArea type="auto">
          <Table aria-label="Deliveries" miw={{ base: 0, sm: 560 }} verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Event</Table.Th>
                <Table.Th>Answer</Table.Th>
                <Table.Th>Time</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {deliveries.data.map((delivery) => {
                const trigger = TRIGGER_LABELS[delivery.trigger];
                return (
                  <Table.Tr key={delivery.id} data-delivery={delivery.id}>
                    <Table.Td style={{ verticalAlign: "top" }}>
                      <Text size="sm" style={{ overflowWrap: "anywhere" }}>
                        {delivery.event_type}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {delivery.event_id !== null ? `event ${delivery.event_id} · ` : ""}attempt {delivery.attempt}
                        {trigger ? ` · ${trigger}` : ""}
                      </Text>
                      {delivery.job_id && (
                        <RouterAnchor to="/jobs/$id" params={{ id: delivery.job_id }} size="xs" title={`Job ${delivery.job_id}`}>
                          Job …{shortId(delivery.job_id)}
                        </RouterAnchor>
                      )}
                    </Table.Td>
                    <Table.Td style={{ verticalAlign: "top" }}>
                      <Answer delivery={delivery} />
                    </Table.Td>
                    <Table.Td style={{ verticalAlign: "top" }}>
                      <Text size="sm">
                        <Time iso={delivery.at} />
                      </Text>
                      <Text size="xs" c="dimmed">
                        {delivery.duration_ms} ms
                      </Text>
                      {delivery.event_id !== null && (
                        <Button
                          size="compact-xs"
                          variant="subtle"
                          mt={4}
                          loading={sending === String(delivery.event_id)}
                          disabled={Boolean(endpoint?.disabled_at)}
                          onClick={() => send(delivery.event_id!)}
                          aria-label={`Send again: event ${delivery.event_id}`}
                        >
                          Send again
                        </Button>
                      )}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollArea>
      )}
    </Drawer>
  );
}
