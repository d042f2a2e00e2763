// The organization's single sign-on settings (docs/reference/tenants.md): read (none: null), saved, removed — the
// cache takes each answer as it comes.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { RequestBody, ResponseBody } from "@conveyor/client";
import { api, ApiError, call } from "../api";
import { keys } from "./keys";

export type SsoSettings = ResponseBody<"/org/sso", "get">;

export function useSsoSettings() {
  return useQuery({
    queryKey: keys.sso.all,
    /** The settings, or null when none are set (404). */
    queryFn: async (): Promise<SsoSettings | null> => {
      try {
        return await call(api.GET("/org/sso"));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
}

export const saveSso = (body: RequestBody<"/org/sso", "put">) => call(api.PUT("/org/sso", { body }));
export const removeSso = () => call(api.DELETE("/org/sso"));

/** Puts the settings the API answered (null: removed) in the cache. */
export function useSetSsoSettings() {
  const queryClient = useQueryClient();
  return (settings: SsoSettings | null) => queryClient.setQueryData(keys.sso.all, settings);
}
