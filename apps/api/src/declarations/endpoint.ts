// One declaration per endpoint: what it is (method, path, who may call it, what it takes and answers) and the
// service it calls. The Express router (http/router.ts) and the OpenAPI document (openapi/document.ts) are
// both built from the same list (endpoints/index.ts), so they cannot disagree.
import type { Request, Response } from "express";
import type Joi from "joi";
import type { Role } from "@conveyor/contracts";
import type { ApiConfig } from "../env";
import type { JsonSchema } from "./json-schema";
import type { ResponseSchemaName } from "./responses";
import type { Caller, ServiceDeps } from "../services/infrastructure/deps";

/**
 * Who may call an endpoint (docs/reference/tenants.md#authentication, docs/reference/tenants.md#the-console): anyone; a user — a user token or a console session; the job credentials —
 * a user token, an API key or a console session; or a console session only (the session endpoints). Roles narrow it
 * further. With a session cookie, every state-changing request also needs the session's X-CSRF-Token. `job_read`:
 * the job credentials, or a public token of the job in the path (docs/reference/events.md#progress-and-live-results), which the handler checks (readableJob).
 * `worker`: an API key of the `worker` role only (docs/reference/lifecycle.md#your-own-workers), which may call nothing else.
 */
export type Access = "public" | "user" | "job" | "job_read" | "session" | "worker";

export type { JsonSchema };

/** The public auth endpoints, each limited per client IP (docs/reference/tenants.md#authentication). */
export type AuthEndpoint = "login" | "signup" | "invite-check" | "invite-accept" | "sso";

export type Tag =
  | "Jobs"
  | "Events"
  | "Webhooks"
  | "Schedules"
  | "Alerts"
  | "Flow control"
  | "Accounts"
  | "API keys"
  | "Team"
  | "Invites"
  | "Audit log"
  | "Usage"
  | "Single sign-on"
  | "Waitpoints"
  | "Workers"
  | "Job types"
  | "Worker protocol"
  | "Callbacks"
  | "Operations"
  | "Reference"
  | "Console";

export type Example = { summary: string; value: unknown };

/** Refusals by status; each becomes a shared response whose body is docs/reference/http.md#errors's error. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 429 | 431 | 500 | 503;

export type ResponseSpec = {
  description: string;
  /** A JSON body, as a component of responseSchemas (an array of them with `array`). */
  json?: { component: ResponseSchemaName; array?: boolean; example: unknown };
  /** Any other body: the media types it may have, and its schema. */
  media?: { types: string[]; schema: JsonSchema };
  headers?: Record<string, { description: string; schema: JsonSchema }>;
};

/** What the router does with a handler's answer. A handler that wrote the response itself returns nothing. */
export type Reply =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  /** A JSON array of already serialised items, streamed with backpressure; `release` runs when it ends. */
  | { status?: number; jsonArray: AsyncIterable<string> | Iterable<string>; headers?: Record<string, string>; release?(): void }
  | { status?: number; file: { contentType: string; filename: string; data: Buffer } }
  | { status: 204 }
  | { status: 302; location: string };

/** What an endpoint's handler may use besides its input: the services' dependencies and the app's own parts. */
export type RouteDeps = ServiceDeps & {
  /** This app's OpenAPI document as JSON text. */
  openApiDocument(): string;
  /** This app's Prometheus registry, rendered. */
  metrics(): Promise<{ contentType: string; body: string }>;
};

export type Input<A extends Access, Q, B, P extends string> = {
  caller: A extends "public" ? undefined : Caller;
  params: Record<P, string>;
  query: Q;
  body: B;
  /** Validated header values, by lower-case name. */
  headers: Record<string, string | undefined>;
  req: Request;
  res: Response;
};

export type EndpointSpec<A extends Access, Q, B, P extends string> = {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** The Express pattern, e.g. /jobs/:id. */
  path: string;
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  access: A;
  /** Roles allowed (after the credential is accepted); 403 for the others. Default: every role. */
  roles?: readonly Role[];
  /** The per-IP limit of a public auth endpoint. Job endpoints are limited per organization by their access. */
  limit?: AuthEndpoint;
  /** Whether this deployment serves the endpoint at all (e.g. signup with ALLOW_SIGNUP=false). Default: yes. */
  enabled?(config: ApiConfig): boolean;
  /** Path parameters, as strings: a malformed id is the service's 404, like an unknown one. */
  params?: Record<P, { description: string; schema: JsonSchema }>;
  /** The query string's schema (values arrive as strings and are converted), or parameters only documented. */
  query?: Joi.ObjectSchema<Q> | JsonSchema[];
  queryDescriptions?: Record<string, string>;
  /** Headers the endpoint reads, validated; `document` is their OpenAPI parameter. */
  headers?: { name: string; schema: Joi.Schema<string>; document: JsonSchema }[];
  body?: {
    schema: Joi.ObjectSchema<B>;
    /** What the document shows, when it says more than the converted schema (e.g. the job types' oneOf). */
    document?: JsonSchema;
    examples?: Record<string, Example>;
    /** The service checks the body itself (e.g. only after the caller proved who it is): passed on as sent. */
    unchecked?: true;
    /** A request may come without a body, checked as `{}` (POST /jobs/{id}/replay). */
    optional?: true;
  };
  responses: Record<number, ResponseSpec>;
  errors: ErrorStatus[];
  handle(input: Input<A, Q, B, P>, deps: RouteDeps): Promise<Reply | void> | Reply | void;
};

/** An endpoint with its input types erased, as the router and the document builder see it. */
export type Endpoint = EndpointSpec<Access, unknown, unknown, string>;

/** Declares an endpoint; the generic parameters type its handler's input from the schemas given. */
export function endpoint<A extends Access, Q = Record<string, never>, B = undefined, P extends string = never>(spec: EndpointSpec<A, Q, B, P>): Endpoint {
  return spec as unknown as Endpoint;
}

const uuid: JsonSchema = { type: "string", format: "uuid" };

export const idParam = (what: string) => ({ description: `The ${what}'s id (UUID). A malformed id is a 404 like an unknown one.`, schema: uuid });

/** Errors any request can meet: a body the API will not read, and the unexpected. */
export const BODY_ERRORS: ErrorStatus[] = [400, 413, 415, 500];
/** Errors of an endpoint that needs a credential and reads Postgres. */
export const AUTHENTICATED_ERRORS: ErrorStatus[] = [401, 500, 503];
