// The audit log (docs/reference/tenants.md): its entries under a search, a page at a time, and who can be an actor
// in its filter (the members, and the API keys the caller can see).
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { api, call, callPage } from "../api";
import type { AuditSearch } from "../pages/audit-search";
import { keys } from "./keys";

const PAGE_SIZE = 50;

export function useAuditLog(search: AuditSearch) {
  return useInfiniteQuery({
    queryKey: keys.auditLog.list(search),
    queryFn: ({ pageParam }) => callPage(api.GET("/audit-log", { params: { query: { ...search, limit: PAGE_SIZE, cursor: pageParam } } })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.next ?? undefined,
  });
}

/** Every member at once (the actor filter's choices). */
export function useAllMembers() {
  return useQuery({ queryKey: keys.members.every(), queryFn: () => call(api.GET("/org/members")) });
}
