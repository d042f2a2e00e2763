// The console's only way to the API: the typed client package, on this origin, authenticated by the HttpOnly
// session cookie, with the session's CSRF token on every state-changing request. The CSRF token is the one
// value a script here can read; it is useless without the cookie, which no script can read.
import { createConveyorClient, type ApiErrorBody } from "@conveyor/client";

let csrfToken: string | undefined;

/** Set from the session (login, session check, organization switch); cleared on logout. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Says whether another tab changed the session's organization; set by the session module (no import cycle). */
let orgChanged: () => boolean = () => false;
export function checkOrgBeforeChanges(check: () => boolean): void {
  orgChanged = check;
}

/** The answer given, without asking the API, to a change asked for while another tab has switched organization. */
export const ORG_CHANGED_MESSAGE =
  "You switched organization in another tab, so this tab was showing another one than the session now uses. Nothing was changed: look again, then retry.";

const guardedFetch: typeof globalThis.fetch = (input, init) => {
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  if (method !== "GET" && method !== "HEAD" && orgChanged()) {
    const body = JSON.stringify({ error: { code: "org_changed", message: ORG_CHANGED_MESSAGE } });
    return Promise.resolve(new Response(body, { status: 409, headers: { "Content-Type": "application/json" } }));
  }
  return globalThis.fetch(input, init);
};

export const api = createConveyorClient({ baseUrl: "", csrfToken: () => csrfToken, fetch: guardedFetch });

export type FieldError = { path: string; message: string };

/** A refusal of the API (docs/reference/http.md#errors), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldError[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Unauthorized = (error: ApiError) => void;
let unauthorized: Unauthorized = () => {};

/** Who hears about a 401 on a request made while logged in: the session, which sends the person to log in. */
export function onUnauthorized(handler: Unauthorized): void {
  unauthorized = handler;
}

/** A refusal seen outside `call` (the event stream). */
export function reportUnauthorized(): void {
  unauthorized(new ApiError(401, "unauthorized", "Your session has ended. Log in again."));
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/**
 * The body of a successful answer, or an ApiError. A 401 is also reported to the session (the cookie expired or
 * the password changed elsewhere) unless `quiet401` (the login form shows its own).
 */
export async function call<T>(request: Promise<Answer<T>>, options: { quiet401?: boolean } = {}): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "network_error", "Could not reach the API. Check your connection and try again.");
  }
  const { data, error, response } = answer;
  if (response.ok) return data as T;
  const body = (error ?? {}) as Partial<ApiErrorBody>;
  const failure = new ApiError(
    response.status,
    body.error?.code ?? "http_error",
    body.error?.message ?? `The API answered ${response.status} ${response.statusText}.`,
    body.error?.details ?? [],
  );
  if (response.status === 401 && !options.quiet401) unauthorized(failure);
  throw failure;
}

/** The cursor of the next page, from a `Link: <…?cursor=…>; rel="next"` header. */
export function nextCursor(response: Response): string | null {
  const link = response.headers.get("link");
  const match = link ? /<([^>]+)>;\s*rel="next"/.exec(link) : null;
  if (!match) return null;
  return new URL(match[1]!, window.location.origin).searchParams.get("cursor");
}

/** A page of a list endpoint: its items and the cursor of the next one. */
export async function callPage<T>(request: Promise<Answer<T[]>>): Promise<{ items: T[]; next: string | null }> {
  let response: Response | undefined;
  const items = await call(
    request.then((answer) => {
      response = answer.response;
      return answer;
    }),
  );
  return { items, next: response ? nextCursor(response) : null };
}
