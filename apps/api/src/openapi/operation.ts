// How an endpoint is described: a small record per route that keeps the joi schema the route validates
// with next to its examples, so the document is rendered from it and the tests can check one against the other.
import type Joi from "joi";
import type { JsonSchema } from "./json-schema";
import type { ResponseSchemaName } from "./responses";

/** Which credential an endpoint takes (SPEC §3). */
export type Auth = "none" | "jwt" | "jwt_or_api_key";

export type Example = { summary: string; value: unknown };

export type BodySpec = {
  /** The schema the route validates the body with. */
  joi: Joi.Schema;
  /** What the document shows, when it says more than `joi` converted (e.g. the job types' oneOf). */
  schema?: JsonSchema;
  examples: Record<string, Example>;
};

export type ResponseSpec = {
  description: string;
  /** A JSON body, as a component of responseSchemas (an array of them with `array`). */
  json?: { component: ResponseSchemaName; array?: boolean; example: unknown };
  /** Any other body: the media types it may have, and its schema. */
  media?: { types: string[]; schema: JsonSchema };
  headers?: Record<string, { description: string; schema: JsonSchema }>;
};

/** Refusals by status; each becomes a shared response whose body is SPEC §2's error. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 429 | 431 | 500 | 503;

export type Operation = {
  method: "get" | "post" | "delete";
  /** The Express pattern, e.g. /jobs/:id. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  pathParams?: Record<string, { description: string; schema: JsonSchema }>;
  /** The joi schema the route validates its query with, or parameters written out. */
  query?: Joi.ObjectSchema | JsonSchema[];
  queryDescriptions?: Record<string, string>;
  headers?: JsonSchema[];
  body?: BodySpec;
  responses: Record<number, ResponseSpec>;
  errors: ErrorStatus[];
};

const uuid: JsonSchema = { type: "string", format: "uuid" };

export const idParam = (what: string) => ({ description: `The ${what}'s id (UUID). A malformed id is a 404 like an unknown one.`, schema: uuid });

/** Errors any request can meet: a body the API will not read, and the unexpected. */
export const BODY_ERRORS: ErrorStatus[] = [400, 413, 415, 500];
/** Errors of a route that needs a credential and reads Postgres. */
export const AUTHENTICATED_ERRORS: ErrorStatus[] = [401, 500, 503];
