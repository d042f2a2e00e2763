// API keys (docs/reference/tenants.md#authentication): managed with a user token only; a key cannot mint or list keys.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { createApiKey, listApiKeys, revokeApiKey } from "../services/api-keys";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const KEY_ID = "0193a5c4-3333-7c1d-9f3a-2b8e4d6f1a01";
const AT = "2026-11-21T09:30:00.000Z";

const createBody = Joi.object<{ name: string; role?: "member" | "worker" }>({
  name: Joi.string().trim().min(1).max(100).prefs({ convert: true }).required(),
  role: Joi.string()
    .valid("member", "worker")
    .description(
      "member (default): the job endpoints, as a member. worker: the worker protocol only (docs/reference/lifecycle.md#your-own-workers); owners and admins make these.",
    ),
});

export const apiKeyEndpoints = [
  endpoint({
    method: "post",
    path: "/api-keys",
    operationId: "createApiKey",
    tag: "API keys",
    summary: "Create an API key",
    description: "The key acts for the organization with the rights of a member, on the job endpoints only. It is shown once, in this response.",
    access: "user",
    body: { schema: createBody, examples: { ci: { summary: "A key for a service", value: { name: "billing-service" } } } },
    responses: {
      201: {
        description: "The new key.",
        json: {
          component: "CreatedApiKey",
          example: {
            id: KEY_ID,
            name: "billing-service",
            prefix: "cvk_7Hq2",
            role: "member",
            key: "cvk_7Hq2Zt9Lk3Vx0Bn8Rw4Pa6Sd1Fg5Jh2Mc7Qe9Ty3Ui",
            created_at: AT,
          },
        },
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 503],
    async handle({ caller, body, req }, deps) {
      const created = await createApiKey({ caller, name: body.name, role: body.role }, deps);
      req.log.info("API key created", { apiKeyId: created.id });
      return { status: 201, json: created, headers: { "Cache-Control": "no-store" } };
    },
  }),
  endpoint({
    method: "get",
    path: "/api-keys",
    operationId: "listApiKeys",
    tag: "API keys",
    summary: "List API keys",
    description: "Owners and admins see every key of the organization; members see their own. Revoked keys are not listed.",
    access: "user",
    responses: {
      200: {
        description: "The keys, without their secret.",
        json: {
          component: "ApiKey",
          array: true,
          example: [
            {
              id: KEY_ID,
              name: "billing-service",
              prefix: "cvk_7Hq2",
              role: "member",
              created_by: USER_ID,
              created_by_email: "ada@example.com",
              created_at: AT,
              last_used_at: null,
            },
          ],
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await listApiKeys({ caller }, deps) };
    },
  }),
  endpoint({
    method: "delete",
    path: "/api-keys/:id",
    operationId: "revokeApiKey",
    tag: "API keys",
    summary: "Revoke an API key",
    description: "Any role may revoke its own keys; owners and admins any key of the organization. Takes effect within 5 seconds.",
    access: "user",
    params: { id: idParam("API key") },
    responses: { 204: { description: "Revoked." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, req }, deps) {
      await revokeApiKey({ caller, id: params.id }, deps);
      req.log.info("API key revoked", { apiKeyId: params.id });
      return { status: 204 };
    },
  }),
];
