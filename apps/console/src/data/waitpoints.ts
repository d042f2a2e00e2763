// Waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps): the ones jobs wait on, and completing one.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import { keys } from "./keys";

export function useOpenWaitpoints() {
  return useQuery({ queryKey: keys.waitpoints.waiting(), queryFn: () => call(api.GET("/waitpoints", { params: { query: { status: "waiting" } } })) });
}

export const completeWaitpoint = ({ id, data }: { id: string; data: unknown }) =>
  call(api.POST("/waitpoints/{id}/complete", { params: { path: { id } }, body: { data } as never }));
export const waitpointsRefresh = () => [keys.waitpoints.all];
