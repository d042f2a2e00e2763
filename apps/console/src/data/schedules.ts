// The organization's schedules as one query (the Schedules page, a job's schedule by name, the jobs list's schedule
// filter): read once, shared by the same key, refreshed by every schedule action through keys.schedules.all; and the
// requests that create, change, pause and delete one.
import { queryOptions, useQuery } from "@tanstack/react-query";
import type { RequestBody } from "@conveyor/client";
import { api, call } from "../api";
import { keys } from "./keys";

export const schedulesQuery = () => queryOptions({ queryKey: keys.schedules.all, queryFn: () => call(api.GET("/schedules")) });

/** `enabled: false` reads nothing until asked (the jobs list's picker, before it is opened). */
export function useSchedules({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({ ...schedulesQuery(), enabled });
}

/** A schedule's name by its id; its short id while the list loads or when it is gone (deleted since). */
export function useScheduleName(id: string | null | undefined): { name: string; known: boolean } | null {
  const schedules = useSchedules();
  if (!id) return null;
  const found = schedules.data?.find((schedule) => schedule.id.toLowerCase() === id.toLowerCase());
  return found ? { name: found.name, known: true } : { name: `…${id.slice(-8)}`, known: false };
}

type ScheduleBody = RequestBody<"/schedules", "post">;

/** A new schedule (`id` absent), or a change of one. */
export const saveSchedule = ({ id, body }: { id?: string; body: ScheduleBody }) =>
  id ? call(api.PATCH("/schedules/{id}", { params: { path: { id } }, body })) : call(api.POST("/schedules", { body }));
export const pauseSchedule = ({ id, paused }: { id: string; paused: boolean }) =>
  call(api.PATCH("/schedules/{id}", { params: { path: { id } }, body: { paused } }));
export const deleteSchedule = (id: string) => call(api.DELETE("/schedules/{id}", { params: { path: { id } } }));
export const schedulesKey = keys.schedules.all;
export const schedulesRefresh = () => [keys.schedules.all];
