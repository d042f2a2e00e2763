// The organization's team: its members (a page at a time), its pending invites, and the requests that change them.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { api, call, callPage } from "../api";
import { keys } from "./keys";

/** Members read per page ("Show more" reads the next). */
const MEMBERS_PAGE = 50;

export function useMembers() {
  return useInfiniteQuery({
    queryKey: keys.members.all,
    queryFn: ({ pageParam }) => callPage(api.GET("/org/members", { params: { query: { limit: MEMBERS_PAGE, cursor: pageParam } } })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.next ?? undefined,
  });
}
export const membersKey = keys.members.all;
export const membersRefresh = () => [keys.members.all];
export const removeMember = (userId: string) => call(api.DELETE("/org/members/{user_id}", { params: { path: { user_id: userId } } }));
export const setMemberRole = ({ userId, role }: { userId: string; role: "admin" | "member" }) =>
  call(api.PATCH("/org/members/{user_id}", { params: { path: { user_id: userId } }, body: { role } }));

export function useInvites() {
  return useQuery({ queryKey: keys.invites.all, queryFn: () => call(api.GET("/org/invites")) });
}
export const invitesKey = keys.invites.all;
export const invitesRefresh = () => [keys.invites.all];
export const revokeInvite = (id: string) => call(api.DELETE("/org/invites/{id}", { params: { path: { id } } }));
export const createInvite = (body: { email: string; role: "member" | "admin" }) => call(api.POST("/org/invite", { body }));
