// Organization job types (docs/reference/lifecycle.md#your-own-workers): registered, changed and deleted by owners and admins with a user token; read by
// any credential of the organization (a service may check a type's schema).
import Joi from "joi";
import { MAX_RETRIES_LIMIT, TIMEOUT_MS_MAX, TIMEOUT_MS_MIN, TYPE_NAME_PATTERN } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint } from "../declarations/endpoint";
import { notFound } from "../services/infrastructure/errors";
import { createJobType, deleteJobType, getJobType, listJobTypes, updateJobType, type JobTypeChangeInput, type JobTypeInput } from "../services/job-types";

const AT = "2026-12-06T09:30:00.000Z";
const schemaExample = {
  type: "object",
  properties: { image_url: { type: "string", format: "uri" }, width: { type: "integer", minimum: 1, maximum: 4000 } },
  required: ["image_url", "width"],
  additionalProperties: false,
};
const typeExample = {
  name: "resize",
  description: "Resize an image with our own Python worker",
  payload_schema: schemaExample,
  default_max_retries: 3,
  default_timeout_ms: 60_000,
  created_at: AT,
  updated_at: AT,
};

const nameParam = {
  description: "The type's name: a lower-case letter, then up to 62 of a-z, 0-9 and _.",
  schema: { type: "string", pattern: "^[a-z][a-z0-9_]{0,62}$" },
};

const fields = {
  payload_schema: Joi.object()
    .unknown(true)
    .description(
      "A JSON Schema (draft 2020-12) for the payloads: at most 64 KiB, 32 levels deep, no regular expression with nested repetition; unknown keywords are refused.",
    ),
  description: Joi.string().max(500).allow(null),
  default_max_retries: Joi.number().integer().min(0).max(MAX_RETRIES_LIMIT).allow(null),
  default_timeout_ms: Joi.number().integer().min(TIMEOUT_MS_MIN).max(TIMEOUT_MS_MAX).allow(null).description("A job's timeout_ms when it gives none."),
};

const createBody = Joi.object<JobTypeInput>({
  name: Joi.string().pattern(TYPE_NAME_PATTERN, "job type name").required(),
  ...fields,
  payload_schema: fields.payload_schema.required(),
});
const changeBody = Joi.object<JobTypeChangeInput>(fields)
  .min(1)
  .messages({ "object.min": "give at least one of payload_schema, description, default_max_retries, default_timeout_ms" });

const checkedName = (name: string) => {
  if (!TYPE_NAME_PATTERN.test(name)) throw notFound("Job type");
  return name;
};

export const jobTypeEndpoints = [
  endpoint({
    method: "post",
    path: "/job-types",
    operationId: "createJobType",
    tag: "Job types",
    summary: "Register a job type",
    description:
      "A type of your organization's own, run by your own workers (the worker protocol, `worker` API keys). POST /jobs then accepts it from your organization " +
      "and validates each payload against `payload_schema` (400 naming each bad field). The name may not be a built-in or plugin type's (409 job_type_taken).",
    access: "user",
    roles: ["owner", "admin"],
    body: {
      schema: createBody,
      examples: { resize: { summary: "An image resize", value: { name: "resize", payload_schema: schemaExample, default_max_retries: 3 } } },
    },
    responses: { 201: { description: "The registered type.", json: { component: "JobType", example: typeExample } } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 409],
    async handle({ caller, body }, deps) {
      return { status: 201, json: await createJobType({ caller, input: body }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/job-types",
    operationId: "listJobTypes",
    tag: "Job types",
    summary: "List your organization's job types",
    access: "job",
    responses: { 200: { description: "The types, by name.", json: { component: "JobType", array: true, example: [typeExample] } } },
    errors: [...AUTHENTICATED_ERRORS],
    async handle({ caller }, deps) {
      return { json: await listJobTypes({ caller }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/job-types/:name",
    operationId: "getJobType",
    tag: "Job types",
    summary: "Get a job type",
    access: "job",
    params: { name: nameParam },
    responses: { 200: { description: "The type.", json: { component: "JobType", example: typeExample } } },
    errors: [...AUTHENTICATED_ERRORS, 404],
    async handle({ caller, params }, deps) {
      return { json: await getJobType({ caller, name: checkedName(params.name) }, deps) };
    },
  }),
  endpoint({
    method: "patch",
    path: "/job-types/:name",
    operationId: "updateJobType",
    tag: "Job types",
    summary: "Change a job type",
    description: "A new payload_schema applies to jobs created from then on; jobs already accepted keep their payloads.",
    access: "user",
    roles: ["owner", "admin"],
    params: { name: nameParam },
    body: { schema: changeBody, examples: { describe: { summary: "A new description", value: { description: "Resize and crop" } } } },
    responses: { 200: { description: "The type as it is now.", json: { component: "JobType", example: typeExample } } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, body }, deps) {
      return { json: await updateJobType({ caller, name: checkedName(params.name), change: body }, deps) };
    },
  }),
  endpoint({
    method: "delete",
    path: "/job-types/:name",
    operationId: "deleteJobType",
    tag: "Job types",
    summary: "Delete a job type",
    description: "New jobs of the type are refused (400 unknown_job_type); jobs already accepted are still leased to your workers and finish.",
    access: "user",
    roles: ["owner", "admin"],
    params: { name: nameParam },
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params }, deps) {
      await deleteJobType({ caller, name: checkedName(params.name) }, deps);
      return { status: 204 };
    },
  }),
];
