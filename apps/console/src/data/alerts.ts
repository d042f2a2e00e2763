// Alerts (docs/reference/time.md#alerts): the organization's open and recent alerts and its rules, read again every
// few seconds, and a rule silenced or not.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import { keys } from "./keys";

const REFRESH_MS = 5_000;

export function useAlerts() {
  return useQuery({ queryKey: keys.alerts.list(), queryFn: () => call(api.GET("/alerts")), refetchInterval: REFRESH_MS });
}
export function useAlertRules() {
  return useQuery({ queryKey: keys.alerts.rules(), queryFn: () => call(api.GET("/alert-rules")), refetchInterval: REFRESH_MS });
}
export const silenceRule = ({ id, seconds }: { id: string; seconds: number }) =>
  call(api.PATCH("/alert-rules/{id}", { params: { path: { id } }, body: { silence_seconds: seconds } }));
export const alertsRefresh = () => [keys.alerts.all];
