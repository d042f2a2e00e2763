// The organization's usage (GET /usage, by day and by type over a range) and its quotas (read again every 30 s: the
// Usage page and the overview's notice share them).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import { keys } from "./keys";

export function useUsage(from: string, to: string) {
  const byDay = useQuery({
    queryKey: keys.usage.byDay(from, to),
    queryFn: () => call(api.GET("/usage", { params: { query: { from, to, group_by: "day" } } })),
  });
  const byType = useQuery({
    queryKey: keys.usage.byType(from, to),
    queryFn: () => call(api.GET("/usage", { params: { query: { from, to, group_by: "type" } } })),
  });
  return { byDay, byType };
}

export function useQuotas({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({ queryKey: keys.quotas.all, queryFn: () => call(api.GET("/quotas")), refetchInterval: 30_000, enabled });
}
