// An endpoint's recent deliveries (owners and admins): each attempt's event and the job it is about (a link), what
// sent it, the receiver's status and the start of its answer, and a button to send the event again; a test event
// can be sent from here. The receiver's answer is shown as text, in a box that scrolls by keyboard too.
import { Badge, Button, Checkbox, Code, Drawer, Group, ScrollArea, Stack, Table, Text, VisuallyHidden } from "@mantine/core";
import { useEffect, useState } from "react";
import type { ResponseBody } from "@conveyor/client";
import { Time, shortId } from "../ui/format";
import { RouterAnchor } from "../ui/link";
import { useAction } from "../data/actions";
import { ErrorState, Empty, Loading } from "../ui/states";
import { useEscapeWhenTopmost } from "../ui/confirm";
import { deliveriesRefresh, sendToEndpoint, useDeliveries } from "../data/webhooks";
import { BulkRedeliver, DeliveryFilters, type DeliveryFilter } from "./webhook-delivery-filters";

type Endpoint = ResponseBody<"/webhook-endpoints", "get">[number];
type Delivery = ResponseBody<"/webhook-endpoints/{id}/deliveries", "get">[number];

const OUTCOME_WORDS: Record<Delivery["outcome"], string> = { succeeded: "delivered", failed: "failed", pending: "failed, retrying" };
// Each at least 4.5:1 on white (Mantine's green.9 and orange.9 are not).
const OUTCOME_COLORS: Record<Delivery["outcome"], string> = { succeeded: "teal.9", failed: "red.9", pending: "gray.7" };

const TRIGGER_LABELS: Record<Delivery["trigger"], string | null> = { event: null, redelivery: "sent again", test: "test event" };

/** The receiver's answer: status, why it failed, and the first KiB of its body when there was one. */
function Answer({ delivery }: { delivery: Delivery }) {
  const ok = delivery.status_code !== null && delivery.status_code >= 200 && delivery.status_code < 300;
  return (
    <Stack gap={4}>
      <Group gap={4} wrap="wrap">
        <Badge color={ok ? "green" : "red"} variant="dot" miw="max-content">
          {delivery.status_code ?? "no answer"}
        </Badge>
        <Text size="xs" c={OUTCOME_COLORS[delivery.outcome]} data-testid="delivery-outcome">
          {OUTCOME_WORDS[delivery.outcome]}
        </Text>
      </Group>
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

export function Deliveries({ endpoint, eventTypes, onClose }: { endpoint: Endpoint | null; eventTypes: readonly string[]; onClose(): void }) {
  // Issue 38: the list's filters and the deliveries picked for a bulk redelivery (both start over with another endpoint).
  const [filter, setFilter] = useState<DeliveryFilter>({});
  const [picked, setPicked] = useState<Set<number>>(new Set());
  useEffect(() => {
    setFilter({});
    setPicked(new Set());
  }, [endpoint?.id]);
  const deliveries = useDeliveries(endpoint?.id, filter);
  const sendAction = useAction({
    run: sendToEndpoint,
    done: (_, { what }) => ({
      title: what === "test" ? "Test event queued" : `Event ${what} queued again`,
      message: "Its delivery appears in this list in a few seconds.",
    }),
    failed: ({ what }) => (what === "test" ? "Could not send a test event" : "Could not send the event again"),
    refresh: () => deliveriesRefresh(endpoint?.id),
  });
  const sending = sendAction.isPending ? String(sendAction.variables?.what) : null;
  const send = (what: "test" | number) => endpoint && sendAction.mutate({ id: endpoint.id, what });

  useEscapeWhenTopmost(endpoint !== null, onClose);

  const changeFilter = (next: DeliveryFilter) => {
    setFilter(next);
    setPicked(new Set());
  };
  const pick = (id: number) => {
    const next = new Set(picked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };

  return (
    <Drawer opened={endpoint !== null} onClose={onClose} closeOnEscape={false} title="Recent deliveries" position="right" size="xl">
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
      {endpoint && (
        <Stack gap="xs" mb="sm">
          <DeliveryFilters filter={filter} eventTypes={eventTypes} onChange={changeFilter} />
          <BulkRedeliver
            endpointId={endpoint.id}
            disabled={Boolean(endpoint.disabled_at)}
            filter={filter}
            selected={[...picked]}
            onDone={() => setPicked(new Set())}
          />
        </Stack>
      )}
      {deliveries.isPending ? (
        <Loading label="Loading deliveries…" />
      ) : deliveries.isError ? (
        <ErrorState error={deliveries.error} retry={() => void deliveries.refetch()} />
      ) : deliveries.data.length === 0 ? (
        Object.keys(filter).length ? (
          <Empty title="No delivery matches these filters">Change or clear the filters to see more.</Empty>
        ) : (
          <Empty title="No deliveries yet">Deliveries appear here as matching events happen, or send a test event.</Empty>
        )
      ) : (
        <ScrollArea type="auto">
          <Table aria-label="Deliveries" miw={{ base: 0, sm: 560 }} verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={36}>
                  <VisuallyHidden>Pick</VisuallyHidden>
                </Table.Th>
                <Table.Th>Event</Table.Th>
                <Table.Th>Answer</Table.Th>
                <Table.Th>Time</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {deliveries.data.map((delivery) => {
                const trigger = TRIGGER_LABELS[delivery.trigger];
                return (
                  <Table.Tr key={delivery.id} data-delivery={delivery.id} data-outcome={delivery.outcome}>
                    <Table.Td style={{ verticalAlign: "top" }}>
                      {delivery.event_id !== null && (
                        <Checkbox
                          aria-label={`Pick delivery ${delivery.id} (event ${delivery.event_id}) to send again`}
                          checked={picked.has(delivery.id)}
                          onChange={() => pick(delivery.id)}
                        />
                      )}
                    </Table.Td>
                    <Table.Td style={{ verticalAlign: "top" }}>
                      {/* Broken only after its dot, never inside a word (issue 48 #10: "job.succeed/ed" at 375 px). */}
                      <Text size="sm" style={{ wordBreak: "normal", overflowWrap: "normal" }} data-testid="delivery-event-type">
                        {delivery.event_type.split(".").map((part, i) => (
                          <span key={i}>
                            {i > 0 && (
                              <>
                                .<wbr />
                              </>
                            )}
                            {part}
                          </span>
                        ))}
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
