// Accounts and API keys (SPEC §3).
import { createBody } from "../../routes/api-keys";
import { loginBody, signupBody } from "../../routes/auth";
import { jsonSchema, withProperty, type JsonSchema } from "../json-schema";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, idParam, type Operation } from "../operation";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const ORG_ID = "0193a5c4-2222-7c1d-9f3a-2b8e4d6f1a01";
const KEY_ID = "0193a5c4-3333-7c1d-9f3a-2b8e4d6f1a01";
const AT = "2026-11-21T09:30:00.000Z";
const TOKEN = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIuLi4iLCJvcmciOiIuLi4ifQ.c2lnbmF0dXJl";
const NEW_PASSWORD = "15 characters to 72 bytes (bcrypt's limit; never truncated), else 400.";

const describe = (field: string, description: string) => (schema: JsonSchema) => withProperty(schema, field, (current) => ({ ...current, description }));
const signupSchema = describe("password", `The new account's password: ${NEW_PASSWORD}`)(jsonSchema(signupBody));
const loginSchema = describe("org_id", "The organization the token is for; default: the user's oldest membership.")(jsonSchema(loginBody));

const authRateLimited = "Limited to AUTH_RATE_LIMIT_PER_MIN requests per minute per client IP, and 10 failed passwords per account per 15 minutes.";

/** POST /auth/signup exists only while ALLOW_SIGNUP is true. */
export const signupOperation: Operation = {
  method: "post",
  path: "/auth/signup",
  operationId: "signup",
  tag: "Accounts",
  summary: "Sign up: a user, an organization, and its owner",
  description: `Answers with a JWT for the new organization. Absent (404) when ALLOW_SIGNUP=false; operators then use \`npm run org:create\`. ${authRateLimited}`,
  auth: "none",
  body: {
    joi: signupBody,
    schema: signupSchema,
    examples: { signup: { summary: "A new organization", value: { email: "ada@example.com", password: "correct horse battery staple", org_name: "Acme" } } },
  },
  responses: {
    201: {
      description: "Signed up.",
      json: { component: "SignupResult", example: { token: TOKEN, user: { id: USER_ID, email: "ada@example.com", role: "owner" }, org: { id: ORG_ID, name: "Acme" } } },
    },
  },
  errors: [...BODY_ERRORS, 409, 429, 503],
};

export const accountOperations: Operation[] = [
  {
    method: "post",
    path: "/auth/login",
    operationId: "login",
    tag: "Accounts",
    summary: "Log in",
    description: `A wrong email and a wrong password get the same 401. ${authRateLimited}`,
    auth: "none",
    body: { joi: loginBody, schema: loginSchema, examples: { login: { summary: "Log in", value: { email: "ada@example.com", password: "correct horse battery staple" } } } },
    responses: {
      200: {
        description: "A token and the user's organizations.",
        json: {
          component: "LoginResult",
          example: { token: TOKEN, user: { id: USER_ID, email: "ada@example.com", role: "owner" }, orgs: [{ id: ORG_ID, name: "Acme", role: "owner" }] },
        },
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 404, 429, 503],
  },
  {
    method: "get",
    path: "/me",
    operationId: "me",
    tag: "Accounts",
    summary: "Who am I",
    description: "The user, organization and role of the token. API keys get 403.",
    auth: "jwt",
    responses: {
      200: { description: "The caller.", json: { component: "Me", example: { user: { id: USER_ID, email: "ada@example.com" }, org: { id: ORG_ID, name: "Acme" }, role: "owner" } } },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
  },
  {
    method: "post",
    path: "/api-keys",
    operationId: "createApiKey",
    tag: "API keys",
    summary: "Create an API key",
    description: "The key acts for the organization with the rights of a member, on the job endpoints only. It is shown once, in this response.",
    auth: "jwt",
    body: { joi: createBody, examples: { ci: { summary: "A key for a service", value: { name: "billing-service" } } } },
    responses: {
      201: {
        description: "The new key.",
        json: { component: "CreatedApiKey", example: { id: KEY_ID, name: "billing-service", prefix: "cvk_7Hq2", key: "cvk_7Hq2Zt9Lk3Vx0Bn8Rw4Pa6Sd1Fg5Jh2Mc7Qe9Ty3Ui", created_at: AT } },
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 503],
  },
  {
    method: "get",
    path: "/api-keys",
    operationId: "listApiKeys",
    tag: "API keys",
    summary: "List API keys",
    description: "Owners and admins see every key of the organization; members see their own. Revoked keys are not listed.",
    auth: "jwt",
    responses: {
      200: {
        description: "The keys, without their secret.",
        json: { component: "ApiKey", array: true, example: [{ id: KEY_ID, name: "billing-service", prefix: "cvk_7Hq2", created_by: USER_ID, created_at: AT, last_used_at: null }] },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
  },
  {
    method: "delete",
    path: "/api-keys/:id",
    operationId: "revokeApiKey",
    tag: "API keys",
    summary: "Revoke an API key",
    description: "Any role may revoke its own keys; owners and admins any key of the organization. Takes effect within 5 seconds.",
    auth: "jwt",
    pathParams: { id: idParam("API key") },
    responses: { 204: { description: "Revoked." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
  },
];
