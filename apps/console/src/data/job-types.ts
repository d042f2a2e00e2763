// The organization's job types: the built-in ones and its own (registered with a payload schema), deleted or added.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import { keys } from "./keys";

export function useJobTypes() {
  return useQuery({ queryKey: keys.jobTypes.all, queryFn: () => call(api.GET("/job-types")) });
}
export const jobTypesKey = keys.jobTypes.all;
export const jobTypesRefresh = () => [keys.jobTypes.all];
export const registerJobType = (body: { name: string; description?: string; payload_schema: Record<string, unknown>; default_max_retries?: number }) =>
  call(api.POST("/job-types", { body }));
export const deleteJobType = (name: string) => call(api.DELETE("/job-types/{name}", { params: { path: { name } } }));
