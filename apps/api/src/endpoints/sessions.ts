// Console sessions (docs/reference/tenants.md#the-console): log in to a session cookie, read it, switch its organization, log out. The cookie is
// HttpOnly and SameSite=Strict; the body's csrf_token goes in X-CSRF-Token on every state-changing request.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam, type JsonSchema, type ResponseSpec } from "../declarations/endpoint";
import { clearedSessionCookie, sessionCookie, sessionTokenOf, SESSION_COOKIE } from "../http/session-cookie";
import { jsonSchema, withProperty } from "../declarations/json-schema";
import { requestOrigin } from "../http/request-origin";
import { describeSession, endSession, findJobElsewhere, startSession, switchSessionOrg } from "../services/sessions";
import { emailField, passwordField } from "../declarations/fields";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const ORG_ID = "0193a5c4-2222-7c1d-9f3a-2b8e4d6f1a01";
const OTHER_ORG_ID = "0193a5c4-4444-7c1d-9f3a-2b8e4d6f1a01";
const CSRF = "Vh3kQ9xZ0mB7rT2sW8yN4cH6fJ1dG5aE3uI0oP9qLkA";

const sessionBody = (org: { id: string; name: string }, role: string) => ({
  user: { id: USER_ID, email: "ada@example.com" },
  org,
  role,
  orgs: [
    { id: ORG_ID, name: "Acme", role: "owner" },
    { id: OTHER_ORG_ID, name: "Globex", role: "member" },
  ],
  csrf_token: CSRF,
});

const startBody = Joi.object<{ email: string; password: string; org_id?: string }>({
  email: emailField.required(),
  password: passwordField.required(),
  org_id: Joi.string().guid(),
});
const switchBody = Joi.object<{ org_id: string }>({ org_id: Joi.string().guid().required() });

const setCookie = (what: string): ResponseSpec["headers"] => ({
  "Set-Cookie": { description: `${what} (\`${SESSION_COOKIE}\`; HttpOnly, SameSite=Strict, Path=/, Secure over https).`, schema: { type: "string" } },
});
const noStore = { "Cache-Control": "no-store" };
const SESSION_RESPONSE = "The session: who, in which organization, the user's organizations, and the CSRF token.";

export const sessionEndpoints = [
  endpoint({
    method: "post",
    path: "/auth/session",
    operationId: "startSession",
    tag: "Accounts",
    summary: "Log in to the console",
    description:
      "Checks the email and password like POST /auth/login (same 401 for a wrong email or password, same limits: " +
      "AUTH_RATE_LIMIT_PER_MIN per client IP, 10 failed passwords per account per 15 minutes) and starts a console " +
      "session in `org_id` or the user's oldest organization. The session token is only in the HttpOnly cookie; it " +
      "lasts SESSION_TTL from now. A session cookie sent along (logging in again) ends that session.",
    access: "public",
    limit: "login",
    body: {
      schema: startBody,
      document: withProperty(jsonSchema(startBody), "org_id", (current: JsonSchema) => ({
        ...current,
        description: "The organization to start in; default: the user's oldest membership.",
      })),
      examples: { login: { summary: "Log in", value: { email: "ada@example.com", password: "correct horse battery staple" } } },
    },
    responses: {
      200: {
        description: SESSION_RESPONSE,
        json: { component: "Session", example: sessionBody({ id: ORG_ID, name: "Acme" }, "owner") },
        headers: setCookie("The session cookie"),
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 404, 429, 503],
    async handle({ body, req }, deps) {
      const started = await startSession(
        { email: body.email, password: body.password, orgId: body.org_id?.toLowerCase(), replacing: sessionTokenOf(req), request: requestOrigin(req) },
        deps,
      );
      req.log.info("console session started", { userId: started.body.user.id, orgId: started.body.org.id });
      return { json: started.body, headers: { ...noStore, "Set-Cookie": sessionCookie(started.token, started.maxAgeSeconds, deps.config) } };
    },
  }),
  endpoint({
    method: "get",
    path: "/auth/session",
    operationId: "getSession",
    tag: "Accounts",
    summary: "The console session",
    description:
      "Who the session cookie belongs to, and its CSRF token. 401 without a live session (none, expired, logged out, or ended by a password change).",
    access: "session",
    responses: { 200: { description: SESSION_RESPONSE, json: { component: "Session", example: sessionBody({ id: ORG_ID, name: "Acme" }, "owner") } } },
    errors: [...AUTHENTICATED_ERRORS],
    async handle({ caller }, deps) {
      return { json: await describeSession({ caller }, deps), headers: noStore };
    },
  }),
  endpoint({
    method: "post",
    path: "/auth/session/org",
    operationId: "switchSessionOrg",
    tag: "Accounts",
    summary: "Switch the console session's organization",
    description: "The session continues in another organization of its user; 404 for an organization the user is not a member of.",
    access: "session",
    body: { schema: switchBody, examples: { switch: { summary: "Switch to Globex", value: { org_id: OTHER_ORG_ID } } } },
    responses: {
      200: { description: SESSION_RESPONSE, json: { component: "Session", example: sessionBody({ id: OTHER_ORG_ID, name: "Globex" }, "member") } },
    },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, body, req }, deps) {
      const session = await switchSessionOrg({ caller, orgId: body.org_id }, deps);
      req.log.info("console session switched organization", { userId: caller.userId, orgId: session.org.id });
      return { json: session, headers: noStore };
    },
  }),
  endpoint({
    method: "get",
    path: "/auth/session/job-orgs/:id",
    operationId: "findJobElsewhere",
    tag: "Accounts",
    summary: "Which other organization of the session has a job",
    description:
      "For a job id the session's organization has no job of: the user's other organizations that have it and that " +
      "POST /auth/session/org can switch to (none for a session begun with single sign-on). Empty for an id no such " +
      "organization has, or a malformed one.",
    access: "session",
    params: { id: idParam("job") },
    responses: {
      200: { description: "Where the job is.", json: { component: "JobElsewhere", example: { orgs: [{ id: OTHER_ORG_ID, name: "Globex", role: "member" }] } } },
    },
    errors: [...AUTHENTICATED_ERRORS],
    async handle({ caller, params }, deps) {
      return { json: { orgs: await findJobElsewhere({ caller, id: params.id }, deps) }, headers: noStore };
    },
  }),
  endpoint({
    method: "delete",
    path: "/auth/session",
    operationId: "endSession",
    tag: "Accounts",
    summary: "Log out of the console",
    description: "Ends the session and clears its cookie.",
    access: "session",
    responses: { 204: { description: "Logged out.", headers: setCookie("Clears the cookie") } },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, res }, deps) {
      await endSession({ caller }, deps);
      res.setHeader("Set-Cookie", clearedSessionCookie(deps.config));
      return { status: 204 };
    },
  }),
];
