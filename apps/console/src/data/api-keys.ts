// The organization's API keys: listed, created (the key is shown once), revoked.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import { keys } from "./keys";

export function useApiKeys({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({ queryKey: keys.apiKeys.all, queryFn: () => call(api.GET("/api-keys")), enabled });
}
export const apiKeysKey = keys.apiKeys.all;
export const apiKeysRefresh = () => [keys.apiKeys.all];
export const createApiKey = (name: string) => call(api.POST("/api-keys", { body: { name } }));
export const revokeApiKey = (id: string) => call(api.DELETE("/api-keys/{id}", { params: { path: { id } } }));
