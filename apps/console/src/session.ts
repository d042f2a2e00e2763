// The person's session: `GET /auth/session` tells who is logged in (the HttpOnly cookie proves it) and hands
// over the CSRF token for state-changing requests. Logging in, switching organization and logging out replace
// it; a 401 anywhere ends it and sends the person to the login page, then back.
import { queryOptions, useQuery, type QueryClient } from "@tanstack/react-query";
import { useRef } from "react";
import type { ResponseBody } from "@conveyor/client";
import { api, ApiError, call, checkOrgBeforeChanges, setCsrfToken } from "./api";
import { keys } from "./data/keys";

export type Session = ResponseBody<"/auth/session", "get">;
export type Role = Session["role"];

export const sessionQuery = queryOptions({
  queryKey: keys.session,
  queryFn: async (): Promise<Session | null> => {
    try {
      return remember(await call(api.GET("/auth/session"), { quiet401: true }));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return remember(null);
      throw error;
    }
  },
  staleTime: Infinity,
  retry: false,
});

/**
 * The organization this tab shows, told to every other tab of the browser (they share the session cookie): after a
 * switch, a login or a logout in one tab, the others follow (main.tsx listens) — and until they have, they send no
 * change (api.ts asks `orgChangedElsewhere` first), so a tab never acts on an organization other than the one it shows.
 */
export const SESSION_ORG_KEY = "conveyor.session-org";
let shownOrg: string | null | undefined;
checkOrgBeforeChanges(() => orgChangedElsewhere());

function remember(session: Session | null): Session | null {
  setCsrfToken(session?.csrf_token);
  shownOrg = session?.org.id ?? null;
  try {
    window.localStorage.setItem(SESSION_ORG_KEY, shownOrg ?? "");
  } catch {
    // Storage refused (a private mode): each tab still checks its own session on every answer.
  }
  return session;
}

/** Another tab of this browser switched organization (or logged out) since this tab last read its session. */
export function orgChangedElsewhere(): boolean {
  if (!shownOrg) return false;
  try {
    const current = window.localStorage.getItem(SESSION_ORG_KEY);
    return current !== null && current !== shownOrg;
  } catch {
    return false;
  }
}

/** Stores a session the API just answered (login, organization switch) and drops every cached answer of the last one. */
export function startSession(queryClient: QueryClient, session: Session): void {
  remember(session);
  queryClient.removeQueries(keys.allButSession());
  queryClient.setQueryData(sessionQuery.queryKey, session);
}

export function endSession(queryClient: QueryClient): void {
  remember(null);
  queryClient.removeQueries(keys.allButSession());
  queryClient.setQueryData(sessionQuery.queryKey, null);
}

export async function logIn(queryClient: QueryClient, body: { email: string; password: string; org_id?: string }): Promise<Session> {
  const session = await call(api.POST("/auth/session", { body }), { quiet401: true });
  startSession(queryClient, session);
  return session;
}

export async function logOut(queryClient: QueryClient): Promise<void> {
  try {
    await call(api.DELETE("/auth/session"), { quiet401: true });
  } finally {
    endSession(queryClient);
  }
}

/** A new organization and its owner (logging in is the caller's next step). */
export const signUp = (body: { email: string; password: string; org_name: string }) => call(api.POST("/auth/signup", { body }), { quiet401: true });

/** The person's new password; a wrong current one is a 401 that must not end this session (it belongs at its field). */
export const changePassword = (body: { current_password: string; new_password: string }) => call(api.POST("/auth/password", { body }), { quiet401: true });

/** The session continues in another organization of its user (the caller starts it: startSession). */
export const switchOrg = (orgId: string) => call(api.POST("/auth/session/org", { body: { org_id: orgId } }));

export const canManageTeam = (role: Role | undefined) => role === "owner" || role === "admin";

/** A path inside the console to return to after logging in; anything else (another origin, `//host`) is refused. */
export function safeRedirect(target: unknown): string {
  if (typeof target !== "string" || !target.startsWith("/") || target.startsWith("//") || target.startsWith("/\\")) return "/overview";
  return target.startsWith("/login") || target.startsWith("/signup") ? "/overview" : target;
}

/**
 * The session of a page behind login (the router made sure there is one). While a logout or an expiry leads
 * away from the page, it keeps answering the last session instead of unmounting everything at once.
 */
export function useSession(): Session {
  const { data } = useQuery(sessionQuery);
  const last = useRef<Session | null>(null);
  if (data) last.current = data;
  if (!last.current) throw new Error("This page needs a session.");
  return last.current;
}
