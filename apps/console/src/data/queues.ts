// Queues and rate limits (docs/reference/flow-control.md#flow-control): each job type's queue with its figures and
// the last hour's activity, the organization's named rate limits, and the requests that change them.
import { useQuery } from "@tanstack/react-query";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { keys } from "./keys";

export type Queue = ResponseBody<"/queues", "get">[number];
export type RateLimit = ResponseBody<"/rate-limits", "get">[number];
export type QueueActivity = ResponseBody<"/queues/activity", "get">;

/** How often the figures are read again while the page is open. */
export const QUEUES_REFRESH_MS = 5_000;

export function useQueues() {
  return useQuery({ queryKey: keys.queues.all, queryFn: () => call(api.GET("/queues")), refetchInterval: QUEUES_REFRESH_MS });
}

export function useRateLimits() {
  return useQuery({ queryKey: keys.rateLimits.all, queryFn: () => call(api.GET("/rate-limits")), refetchInterval: QUEUES_REFRESH_MS });
}

/** The charts' data, read again every 30 seconds (a minute's bar fills in as it goes). */
export function useQueueActivity() {
  return useQuery({ queryKey: keys.queueActivity.all, queryFn: () => call(api.GET("/queues/activity")), refetchInterval: 30_000 });
}

/** Pauses or resumes a queue, or sets its cap and rate limit. */
export const patchQueue = ({ type, body }: { type: string; body: { paused?: boolean; concurrency_limit?: number | null; rate_limit?: string | null } }) =>
  call(api.PATCH("/queues/{type}", { params: { path: { type } }, body }));
export const queuesRefresh = () => [keys.queues.all];

export const putRateLimit = ({ name, body }: { name: string; body: { limit: number; period: RateLimit["period"] } }) =>
  call(api.PUT("/rate-limits/{name}", { params: { path: { name } }, body }));
export const deleteRateLimit = (name: string) => call(api.DELETE("/rate-limits/{name}", { params: { path: { name } } }));
export const rateLimitsKey = keys.rateLimits.all;
export const rateLimitsRefresh = () => [keys.rateLimits.all];
