// The deliveries drawer's filters and bulk redelivery (issue 38): narrow an endpoint's deliveries by outcome, event
// type and time, then send the failed ones matching the filters — or the ones picked — again in one action, after a
// confirmation that names how many events go out (counted by the API with dry_run, the same query that sends them).
import { Alert, Button, Group, Select, SimpleGrid, Stack, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import { useAction } from "../data/actions";
import { deliveriesRefresh, redeliverFailed, type DeliveryFilter } from "../data/webhooks";
import { Confirm } from "../ui/confirm";
import { fromLocalInput, toLocalInput } from "../ui/local-time";

/** The deliveries list's filters, as the API's document types them (GET /webhook-endpoints/{id}/deliveries). */
export type { DeliveryFilter };

const OUTCOMES = [
  { value: "failed", label: "Failed" },
  { value: "pending", label: "Failed, retrying" },
  { value: "succeeded", label: "Succeeded" },
];

export function DeliveryFilters(props: { filter: DeliveryFilter; eventTypes: readonly string[]; onChange(filter: DeliveryFilter): void }) {
  const { filter, onChange } = props;
  const set = (change: Partial<DeliveryFilter>) =>
    onChange(Object.fromEntries(Object.entries({ ...filter, ...change }).filter(([, v]) => v)) as DeliveryFilter);
  return (
    <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="xs" verticalSpacing="xs" role="group" aria-label="Filter deliveries">
      <Select
        label="Outcome"
        placeholder="Any outcome"
        data={OUTCOMES}
        value={filter.outcome ?? null}
        onChange={(value) => set({ outcome: (value ?? undefined) as DeliveryFilter["outcome"] })}
        clearable
      />
      <Select
        label="Event type"
        placeholder="Any event"
        data={[...props.eventTypes.filter((type) => type !== "*"), "webhook.test"]}
        value={filter.event_type ?? null}
        onChange={(value) => set({ event_type: (value ?? undefined) as DeliveryFilter["event_type"] })}
        clearable
      />
      <TextInput
        label="From"
        type="datetime-local"
        value={toLocalInput(filter.after)}
        onChange={(e) => set({ after: fromLocalInput(e.currentTarget.value) })}
      />
      <TextInput
        label="Before"
        type="datetime-local"
        value={toLocalInput(filter.before)}
        onChange={(e) => set({ before: fromLocalInput(e.currentTarget.value) })}
      />
    </SimpleGrid>
  );
}

type Bulk = { ids: number[] } | { filter: Omit<DeliveryFilter, "outcome"> };

/** "Redeliver failed" for the filters, or "Redeliver N selected": counts first, asks, then sends. */
export function BulkRedeliver(props: { endpointId: string; disabled: boolean; filter: DeliveryFilter; selected: number[]; onDone(): void }) {
  const { endpointId, filter, selected } = props;
  const [asking, setAsking] = useState<{ bulk: Bulk; events: number; hasMore: boolean } | null>(null);
  const refresh = () => deliveriesRefresh(endpointId);
  const body = (bulk: Bulk, dryRun: boolean) => ("ids" in bulk ? { delivery_ids: bulk.ids, dry_run: dryRun } : { filter: bulk.filter, dry_run: dryRun });
  const counting = useAction({
    run: (bulk: Bulk) => redeliverFailed(endpointId, body(bulk, true)),
    failed: "Could not count the deliveries to send again",
    refresh: () => [],
    onSuccess: (counted, bulk) => setAsking({ bulk, events: counted.events, hasMore: counted.has_more }),
  });
  const sending = useAction({
    run: (bulk: Bulk) => redeliverFailed(endpointId, body(bulk, false)),
    done: (sent) => ({
      title: `${sent.events} event${sent.events === 1 ? "" : "s"} queued again`,
      message: sent.has_more ? "More remain: press again to send the next ones." : "Their deliveries appear in this list in a few seconds.",
    }),
    failed: "Could not send the deliveries again",
    refresh,
    onSuccess: () => {
      setAsking(null);
      props.onDone();
    },
  });
  const { outcome: _outcome, ...matching } = filter;
  const failedOnly = filter.outcome === undefined || filter.outcome === "failed";
  const events = asking?.events ?? 0;

  return (
    <Stack gap="xs">
      <Group gap="xs" wrap="wrap">
        {selected.length > 0 ? (
          <Button size="xs" disabled={props.disabled} loading={counting.isPending} onClick={() => counting.mutate({ ids: selected })}>
            Redeliver {selected.length} selected…
          </Button>
        ) : (
          <Button
            size="xs"
            disabled={props.disabled || !failedOnly}
            loading={counting.isPending}
            onClick={() => counting.mutate({ filter: matching })}
            title={failedOnly ? undefined : "Only failed deliveries are sent again: choose the Failed outcome, or none."}
          >
            Redeliver failed…
          </Button>
        )}
        {!failedOnly && selected.length === 0 && (
          <Text size="xs" c="dimmed">
            Only failed deliveries are sent again in bulk.
          </Text>
        )}
      </Group>
      <Confirm
        opened={asking !== null}
        title={events === 0 ? "Nothing to send again" : "Send these events again?"}
        confirmLabel={events === 0 ? null : `Redeliver ${events} event${events === 1 ? "" : "s"}`}
        color="indigo"
        loading={sending.isPending}
        onConfirm={() => (asking && events > 0 ? sending.mutate(asking.bulk) : setAsking(null))}
        onClose={() => !sending.isPending && setAsking(null)}
      >
        {events === 0 ? (
          "No failed delivery here waits to be sent again: each event was received since, is still retrying, or is no longer kept."
        ) : (
          <Stack gap={6}>
            <Text size="sm" data-testid="redeliver-count">
              {events} event{events === 1 ? "" : "s"}
              {asking?.hasMore ? " (the first batch; more remain)" : ""} will be sent again, each once, with its original webhook-id.
            </Text>
            {asking && "filter" in asking.bulk && (
              <Alert color="gray" p="xs">
                The failed deliveries matching the filters: {describe(asking.bulk.filter)}.
              </Alert>
            )}
          </Stack>
        )}
      </Confirm>
    </Stack>
  );
}

function describe(filter: Omit<DeliveryFilter, "outcome">): string {
  const parts = [
    filter.event_type ? `event ${filter.event_type}` : "any event",
    filter.after ? `from ${new Date(filter.after).toLocaleString()}` : null,
    filter.before ? `before ${new Date(filter.before).toLocaleString()}` : null,
  ];
  return parts.filter(Boolean).join(", ");
}
