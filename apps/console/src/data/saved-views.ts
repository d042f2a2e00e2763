// The person's saved views of the jobs list (GET/POST/DELETE /saved-views): theirs alone.
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../api";
import type { JobFilter } from "../pages/job-search";
import { keys } from "./keys";

export function useSavedViews() {
  return useQuery({ queryKey: keys.savedViews.all, queryFn: () => call(api.GET("/saved-views")) });
}
export const savedViewsKey = keys.savedViews.all;
export const savedViewsRefresh = () => [keys.savedViews.all];
export const saveView = ({ name, filter }: { name: string; filter: JobFilter }) => call(api.POST("/saved-views", { body: { name, filter } }));
export const deleteView = (id: string) => call(api.DELETE("/saved-views/{id}", { params: { path: { id } } }));
