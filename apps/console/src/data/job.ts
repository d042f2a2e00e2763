// One job's data (the job page): the job, its log lines and attempts, read again while it is unfinished; where else
// a job id this organization lacks is; and the actions on it (cancel, replay, run now, look in another organization).
import { queryOptions, useQueryClient } from "@tanstack/react-query";
import type { ResponseBody } from "@conveyor/client";
import { api, call } from "../api";
import { startSession } from "../session";
import { useAction } from "./actions";
import { keys } from "./keys";

export type Job = ResponseBody<"/jobs/{id}", "get">;

/**
 * The session's other organizations that have a job with this id (issue 48 #10: "Look in …" was offered for an id
 * no organization has, and switching there found nothing either). The API answers none for a malformed id.
 */
export const jobElsewhereQuery = (id: string) =>
  queryOptions({
    queryKey: keys.job.elsewhere(id),
    queryFn: async () => (await call(api.GET("/auth/session/job-orgs/{id}", { params: { path: { id } } }))).orgs,
  });

/** Switches the session to the organization a job was found in; the new session refreshes everything it shows. */
export function useLookIn() {
  const queryClient = useQueryClient();
  return useAction({
    run: (orgId: string) => call(api.POST("/auth/session/org", { body: { org_id: orgId } })),
    failed: "Could not switch organization",
    onSuccess: (session) => startSession(queryClient, session),
    refresh: () => [],
  });
}
