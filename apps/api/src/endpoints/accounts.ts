// Accounts (docs/reference/tenants.md#authentication, docs/reference/tenants.md#team-api-for-the-console): signup (unless ALLOW_SIGNUP=false), login, who am I, and changing a password.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, type JsonSchema } from "../declarations/endpoint";
import { jsonSchema, withProperty } from "../declarations/json-schema";
import { changePassword, describeCaller, login, signup } from "../services/accounts";
import { requestOrigin } from "../http/request-origin";
import { emailField, newPasswordField, passwordField } from "../declarations/fields";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const ORG_ID = "0193a5c4-2222-7c1d-9f3a-2b8e4d6f1a01";
const TOKEN = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIuLi4iLCJvcmciOiIuLi4ifQ.c2lnbmF0dXJl";
const NEW_PASSWORD = "15 characters to 72 bytes (bcrypt's limit; never truncated), else 400.";

const signupBody = Joi.object<{ email: string; password: string; org_name: string }>({
  email: emailField.required(),
  password: newPasswordField.required(),
  org_name: Joi.string().trim().min(1).max(200).prefs({ convert: true }).required(),
});

const loginBody = Joi.object<{ email: string; password: string; org_id?: string }>({
  email: emailField.required(),
  password: passwordField.required(),
  org_id: Joi.string().guid(),
});

const passwordBody = Joi.object<{ current_password: string; new_password: string }>({
  current_password: passwordField.required(),
  new_password: newPasswordField.required(),
});

const describe = (field: string, description: string) => (schema: JsonSchema) => withProperty(schema, field, (current) => ({ ...current, description }));

const authRateLimited = "Limited to AUTH_RATE_LIMIT_PER_MIN requests per minute per client IP, and 10 failed passwords per account per 15 minutes.";
const noStore = { "Cache-Control": "no-store" };

export const signupEndpoint = endpoint({
  method: "post",
  path: "/auth/signup",
  operationId: "signup",
  tag: "Accounts",
  summary: "Sign up: a user, an organization, and its owner",
  description: `Answers with a JWT for the new organization. Absent (404) when ALLOW_SIGNUP=false; operators then use \`npm run org:create\`. ${authRateLimited}`,
  access: "public",
  limit: "signup",
  // With signup disabled the route does not exist: the request falls through to the unknown-route 404.
  enabled: (config) => config.ALLOW_SIGNUP,
  body: {
    schema: signupBody,
    document: describe("password", `The new account's password: ${NEW_PASSWORD}`)(jsonSchema(signupBody)),
    examples: { signup: { summary: "A new organization", value: { email: "ada@example.com", password: "correct horse battery staple", org_name: "Acme" } } },
  },
  responses: {
    201: {
      description: "Signed up.",
      json: {
        component: "SignupResult",
        example: { token: TOKEN, user: { id: USER_ID, email: "ada@example.com", role: "owner" }, org: { id: ORG_ID, name: "Acme" } },
      },
    },
  },
  errors: [...BODY_ERRORS, 409, 429, 503],
  async handle({ body, req }, deps) {
    const result = await signup({ email: body.email, password: body.password, orgName: body.org_name }, deps);
    req.log.info("signed up", { userId: result.user.id, orgId: result.org.id });
    return { status: 201, json: result, headers: noStore };
  },
});

export const accountEndpoints = [
  endpoint({
    method: "post",
    path: "/auth/login",
    operationId: "login",
    tag: "Accounts",
    summary: "Log in",
    description: `A wrong email and a wrong password get the same 401. ${authRateLimited}`,
    access: "public",
    limit: "login",
    body: {
      schema: loginBody,
      document: describe("org_id", "The organization the token is for; default: the user's oldest membership.")(jsonSchema(loginBody)),
      examples: { login: { summary: "Log in", value: { email: "ada@example.com", password: "correct horse battery staple" } } },
    },
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
    async handle({ body, req }, deps) {
      const result = await login({ email: body.email, password: body.password, orgId: body.org_id?.toLowerCase(), request: requestOrigin(req) }, deps);
      return { json: result, headers: noStore };
    },
  }),
  endpoint({
    method: "get",
    path: "/me",
    operationId: "me",
    tag: "Accounts",
    summary: "Who am I",
    description: "The user, organization and role of the token or console session. API keys get 403.",
    access: "user",
    responses: {
      200: {
        description: "The caller.",
        json: { component: "Me", example: { user: { id: USER_ID, email: "ada@example.com" }, org: { id: ORG_ID, name: "Acme" }, role: "owner" } },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await describeCaller({ caller }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/auth/password",
    operationId: "changePassword",
    tag: "Accounts",
    summary: "Change your password",
    description:
      "A user token or a console session (API keys get 403). A wrong current password is 401 and counts as a failed login " +
      "for the account (10 per 15 minutes). Every other token and console session of the user stops working at once; " +
      "the console session that asked stays logged in, while a token used to ask ends too (log in again).",
    access: "user",
    body: {
      schema: passwordBody,
      document: describe("new_password", `The new password: ${NEW_PASSWORD}`)(jsonSchema(passwordBody)),
      examples: {
        change: { summary: "A new password", value: { current_password: "correct horse battery staple", new_password: "a longer and newer passphrase" } },
      },
    },
    responses: { 204: { description: "Changed." } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 429],
    async handle({ caller, body, req }, deps) {
      await changePassword({ caller, currentPassword: body.current_password, newPassword: body.new_password }, deps);
      req.log.info("password changed", { userId: caller.userId });
      return { status: 204 };
    },
  }),
];
