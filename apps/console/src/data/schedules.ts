// The organization's schedules as one query (the Schedules page, a job's schedule by name, the jobs list's schedule
// filter): read once, shared by the same key, refreshed by every schedule action through keys.schedules.all.
import { queryOptions, useQuery } from "@tanstack/react-query";
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
