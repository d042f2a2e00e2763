// The OpenAPI 3.1 document of this app, rendered from the endpoint declarations (endpoints/index.ts) that the
// router is built from, and the shared components.
import { readFileSync } from "node:fs";
import path from "node:path";
import { MAX_JSON_DEPTH } from "@conveyor/contracts";
import type { ApiConfig } from "../env";
import type { EndpointRegistry } from "../declarations/registry";
import type { Access, Endpoint, JsonSchema, ResponseSpec } from "../declarations/endpoint";
import { catalogOptions } from "../services/infrastructure/job-catalog";
import { errorResponseRef, errorResponses } from "./errors";
import { jobSchemas } from "./job-types";
import { jsonSchema, queryParameters, ref, withoutDefaults } from "../declarations/json-schema";
import { responseSchemas } from "../declarations/responses";

export type DocumentOptions = ApiConfig;

const TAGS = [
  { name: "Jobs", description: "Enqueue jobs and follow them. A user token or an API key; always scoped to the caller's organization." },
  {
    name: "Events",
    description: "Server-sent streams of the organization's job events, resumable with Last-Event-ID. Access as for jobs.",
  },
  {
    name: "Webhooks",
    description: "Endpoints that receive the organization's job events as signed CloudEvents; owners and admins, user tokens only.",
  },
  { name: "Schedules", description: "Cron schedules that create a job at each tick. Access as for jobs." },
  {
    name: "Flow control",
    description:
      "Rate limits the organization's jobs start under, and its settings of each job type's queue. Anyone of the organization reads them; owners and admins change them.",
  },
  { name: "Accounts", description: "Sign up, log in (a token, or a console session cookie), who am I, and your password." },
  { name: "API keys", description: "Keys for services; managed with a user token or a console session, never with a key." },
  { name: "Team", description: "Members and invites of the organization; user tokens and console sessions only." },
  { name: "Invites", description: "Public: what an invitee uses to join." },
  { name: "Audit log", description: "Who did what in the organization: every state-changing request of a person or an API key. Owners and admins." },
  {
    name: "Usage",
    description:
      "What the organization used per day and job type (docs/reference/tenants.md#usage-quotas-and-backpressure), for billing or showing. Owners and admins.",
  },
  {
    name: "Single sign-on",
    description: "The organization's OpenID Connect provider (owners), and the sign-in through it that ends in a console session.",
  },
  {
    name: "Waitpoints",
    description:
      "Points jobs wait on until someone completes them: a caller of your organization, a member in the console, or a third party with the one-time complete_url (docs/reference/lifecycle.md#waitpoints-and-durable-steps).",
  },
  {
    name: "Workers",
    description:
      "The deployment's worker processes as capacity per job type you use (in full only where the operator allows it), and the jobs of your organization they run. Anyone of the organization reads them.",
  },
  {
    name: "Alerts",
    description:
      "Alert rules over your jobs, queues, workers, webhooks, schedules and quotas, evaluated by the workers' leader, and the alerts they fired (docs/reference/time.md#alerts).",
  },
  {
    name: "Job types",
    description:
      "Your organization's own job types (docs/reference/lifecycle.md#your-own-workers): a JSON Schema for their payloads; their jobs run on your own workers, over the worker protocol.",
  },
  {
    name: "Worker protocol",
    description:
      "For your own workers, in any language (docs/reference/lifecycle.md#your-own-workers), with an API key of the `worker` role: lease jobs of your types (long-poll), heartbeat, record steps, sleep, wait for waitpoints, complete or fail — each call fenced by its lease token (409 once lapsed or superseded).",
  },
  { name: "Callbacks", description: "Called by providers, not by you." },
  { name: "Operations", description: "Health and metrics, for load balancers and Prometheus." },
  { name: "Reference", description: "This document and its page." },
  { name: "Console", description: "The web console for people, served from this origin." },
];

const DESCRIPTION = `Conveyor runs background jobs for your services: enqueue over HTTP, follow status and logs, manage your team.

- **Bodies** are UTF-8 JSON (\`Content-Type: application/json\`, at most 1 MiB, nested at most ${MAX_JSON_DEPTH} levels), with no
  \`__proto__\`, \`constructor\` or \`prototype\` key and no NUL or lone surrogate in any string or key. Timestamps are
  ISO 8601 UTC with milliseconds; ids are UUID v7.
- **Credentials**: \`Authorization: Bearer <JWT>\` (from signup, login or an accepted invite) or \`X-API-Key: cvk_…\`
  (job endpoints only). With both, the bearer token is used. The console uses the \`conveyor_session\` cookie instead
  (POST /auth/session), and with it every POST, PATCH, PUT and DELETE must send the session's \`X-CSRF-Token\`
  (otherwise 403 \`csrf_failed\`); a bearer token or an API key, when sent, wins over the cookie.
- **Errors** always have the body \`{"error": {"code", "message", "details"?}}\`; the code says what happened.
- Every response carries \`X-Request-Id\` (yours, if you sent a sane one).`;

const requestId = { $ref: "#/components/headers/XRequestId" };

function version(): string {
  try {
    return (JSON.parse(readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

const oasPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, "{$1}");

const SECURITY: Record<Access, Record<string, string[]>[]> = {
  public: [],
  user: [{ bearerAuth: [] }, { sessionCookie: [] }],
  job: [{ bearerAuth: [] }, { apiKeyAuth: [] }, { sessionCookie: [] }],
  job_read: [{ bearerAuth: [] }, { apiKeyAuth: [] }, { sessionCookie: [] }, { publicToken: [] }, { publicTokenQuery: [] }],
  session: [{ sessionCookie: [] }],
  worker: [{ apiKeyAuth: [] }],
};

/** Operations that change state: with the session cookie they need the CSRF header (and can be refused with 403). */
const CSRF_PARAMETER = {
  name: "X-CSRF-Token",
  in: "header",
  required: false,
  description:
    "Required when the request is authenticated by the console's session cookie: the `csrf_token` of POST or GET " +
    "/auth/session (else 403 `csrf_failed`). Not needed with a bearer token or an API key.",
  schema: { type: "string" },
};
// A worker key is the only credential of the worker protocol: no session cookie, so no CSRF header.
const changesState = (op: Endpoint) => op.access !== "public" && op.access !== "worker" && op.method !== "get";

function response(spec: ResponseSpec): JsonSchema {
  const headers = { "X-Request-Id": requestId, ...spec.headers };
  if (spec.json) {
    const schema = spec.json.array ? { type: "array", items: ref(spec.json.component) } : ref(spec.json.component);
    return { description: spec.description, headers, content: { "application/json": { schema, example: spec.json.example } } };
  }
  if (spec.media)
    return { description: spec.description, headers, content: Object.fromEntries(spec.media.types.map((type) => [type, { schema: spec.media!.schema }])) };
  return { description: spec.description, headers };
}

function operationObject(op: Endpoint): JsonSchema {
  const parameters = [
    ...Object.entries(op.params ?? {}).map(([name, p]) => ({ name, in: "path", required: true, ...p })),
    ...withoutDefaults(Array.isArray(op.query) ? op.query : op.query ? queryParameters(op.query, op.queryDescriptions) : []),
    ...(op.headers ?? []).map((h) => h.document),
    ...(changesState(op) ? [CSRF_PARAMETER] : []),
  ];
  const errors = [
    ...new Set([...op.errors, ...(op.access === "public" ? [] : [401 as const]), ...(changesState(op) ? [403 as const] : []), 500 as const]),
  ].sort();
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: SECURITY[op.access],
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: !op.body.optional,
            content: { "application/json": { schema: withoutDefaults(op.body.document ?? jsonSchema(op.body.schema)), examples: op.body.examples } },
          },
        }
      : {}),
    responses: {
      ...Object.fromEntries(Object.entries(op.responses).map(([status, spec]) => [status, response(spec)])),
      ...Object.fromEntries(errors.map((status) => [String(status), errorResponseRef(status)])),
    },
  };
}

/** The document of the endpoints this deployment serves, read from the registry of their declarations. */
export function buildOpenApiDocument(options: DocumentOptions, endpoints: EndpointRegistry): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of endpoints.served(options)) {
    const key = oasPath(op.path);
    paths[key] = { ...paths[key], [op.method]: operationObject(op) };
  }
  const responseComponents = Object.fromEntries(Object.entries(responseSchemas).map(([name, schema]) => [name, jsonSchema(schema)]));
  return {
    openapi: "3.1.0",
    info: { title: "Conveyor API", version: version(), description: DESCRIPTION, license: { name: "Apache-2.0", identifier: "Apache-2.0" } },
    servers: [{ url: options.PUBLIC_URL, description: "This deployment (PUBLIC_URL)." }],
    tags: TAGS,
    paths,
    components: {
      schemas: { ...jobSchemas(catalogOptions(options)), ...responseComponents },
      responses: errorResponses(),
      headers: { XRequestId: { description: "The request's id: yours if you sent a sane X-Request-Id, else a new one.", schema: { type: "string" } } },
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A user token from signup, login or an accepted invite (HS256, lifetime JWT_TTL).",
        },
        apiKeyAuth: {
          type: "apiKey",
          in: "header",
          name: "X-API-Key",
          description: "An organization's API key (cvk_…); job endpoints only, with a member's rights.",
        },
        publicToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "cvpt_…",
          description: "A job's public token (POST /jobs/{id}/public-token): reads that one job, its output and its events, nothing else.",
        },
        publicTokenQuery: {
          type: "apiKey",
          in: "query",
          name: "token",
          description: "A job's public token in the query string, for EventSource (which cannot send headers).",
        },
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: "conveyor_session",
          description:
            "The web console's session (POST /auth/session; HttpOnly, SameSite=Strict, lifetime SESSION_TTL). With it, state-changing " +
            "requests must send the session's X-CSRF-Token. A bearer token or an API key, when present, is used instead.",
        },
      },
    },
  };
}
