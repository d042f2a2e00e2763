// Webhook endpoints (docs/reference/events.md): the organization's endpoints, an endpoint's deliveries under filters,
// and the requests that add, change, delete, rotate, test and redeliver.
import { useQuery } from "@tanstack/react-query";
import type { operations, RequestBody } from "@conveyor/client";
import { api, call } from "../api";
import { keys } from "./keys";

export type DeliveryFilter = Omit<NonNullable<operations["listWebhookDeliveries"]["parameters"]["query"]>, "limit">;
type Patch = RequestBody<"/webhook-endpoints/{id}", "patch">;

export function useWebhookEndpoints({ enabled }: { enabled: boolean }) {
  return useQuery({ queryKey: keys.webhookEndpoints.all, queryFn: () => call(api.GET("/webhook-endpoints")), enabled });
}
export const endpointsKey = keys.webhookEndpoints.all;
export const endpointsRefresh = () => [keys.webhookEndpoints.all];

export const createEndpoint = (body: RequestBody<"/webhook-endpoints", "post">) => call(api.POST("/webhook-endpoints", { body }));
export const updateEndpoint = ({ id, patch }: { id: string; patch: Patch }) =>
  call(api.PATCH("/webhook-endpoints/{id}", { params: { path: { id } }, body: patch }));
export const deleteEndpoint = (id: string) => call(api.DELETE("/webhook-endpoints/{id}", { params: { path: { id } } }));
export const rotateSecret = (id: string) => call(api.POST("/webhook-endpoints/{id}/rotate-secret", { params: { path: { id } } }));

/** An endpoint's deliveries under `filter`, read again every 3 s while its drawer is open. */
export function useDeliveries(endpointId: string | undefined, filter: DeliveryFilter) {
  return useQuery({
    queryKey: keys.webhookEndpoints.filteredDeliveries(endpointId, filter),
    queryFn: () => call(api.GET("/webhook-endpoints/{id}/deliveries", { params: { path: { id: endpointId! }, query: filter } })),
    enabled: endpointId !== undefined,
    refetchInterval: 3000,
  });
}
/** What a delivery sent again or a test event refreshes: every list of the endpoint's deliveries. */
export const deliveriesRefresh = (endpointId: string | undefined) => [keys.webhookEndpoints.deliveries(endpointId)];

/** A test event, or one event sent again. */
export async function sendToEndpoint({ id, what }: { id: string; what: "test" | number }): Promise<void> {
  if (what === "test") await call(api.POST("/webhook-endpoints/{id}/test", { params: { path: { id } } }));
  else await call(api.POST("/webhook-endpoints/{id}/redeliver", { params: { path: { id } }, body: { event_id: what } }));
}

/** The failed deliveries picked or matching a filter, sent again (`dry_run`: only counted). */
export const redeliverFailed = (endpointId: string, body: RequestBody<"/webhook-endpoints/{id}/redeliver-failed", "post">) =>
  call(api.POST("/webhook-endpoints/{id}/redeliver-failed", { params: { path: { id: endpointId } }, body }));
