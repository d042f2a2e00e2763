// The workers serving the organization (and, as capacity, the deployment's), read again every few seconds.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import { keys } from "./keys";

/** How often the registry is read again while the page is open (workers heartbeat every 5 s by default). */
const REFRESH_MS = 3_000;

export function useWorkers() {
  return useQuery({ queryKey: keys.workers.all, queryFn: () => call(api.GET("/workers")), refetchInterval: REFRESH_MS });
}
