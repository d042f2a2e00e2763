// Public invite endpoints (docs/reference/tenants.md#team-and-roles): check a token, accept it, and the page an invitee opens. No credential;
// limited per client IP. The access log records paths only, so the token in `?token=` never reaches a log line.
import Joi from "joi";
import { BODY_ERRORS, endpoint } from "../declarations/endpoint";
import { jsonSchema, withProperty } from "../declarations/json-schema";
import { sendPage } from "../pages/send";
import { ACCEPT_INVITE_POLICY, acceptInviteCss, acceptInviteHtml, acceptInviteJs } from "../pages/accept-invite";
import { requestOrigin } from "../http/request-origin";
import { acceptInvite, inspectInvite } from "../services/invites";
import { passwordField } from "../declarations/fields";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const EXPIRES = "2026-11-24T09:30:00.000Z";
const INVITE_TOKEN = "pV3x9QmZl0bK7rT2sW8yN4cH6fJ1dG5aE3uI0oP9qLk";
const publicLimit = "Limited to AUTH_RATE_LIMIT_PER_MIN requests per minute per client IP.";

// Length rules for a new account's password are applied by the service: an existing account's password
// is only compared.
const tokenField = Joi.string().min(1).max(200);
const inspectQuery = Joi.object<{ token: string }>({ token: tokenField.required() });
const acceptBody = Joi.object<{ token: string; password: string }>({ token: tokenField.required(), password: passwordField.required() });

const page = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });
const noStore = { "Cache-Control": "no-store" };

export const inviteEndpoints = [
  endpoint({
    method: "get",
    path: "/invite",
    operationId: "inspectInvite",
    tag: "Invites",
    summary: "Check an invite token",
    description: `Public. What the invite page shows before asking for a password. ${publicLimit}`,
    access: "public",
    limit: "invite-check",
    query: inspectQuery,
    queryDescriptions: { token: "The token from the invite URL." },
    responses: {
      200: {
        description: "The invite.",
        json: { component: "InviteInfo", example: { email: "grace@example.com", org_name: "Acme", role: "admin", expires_at: EXPIRES } },
      },
    },
    errors: [400, 404, 410, 429, 500, 503],
    async handle({ query }, deps) {
      return { json: await inspectInvite({ token: query.token }, deps), headers: noStore };
    },
  }),
  endpoint({
    method: "post",
    path: "/invite/accept",
    operationId: "acceptInvite",
    tag: "Invites",
    summary: "Accept an invite",
    description:
      "Public. Creates the account if the email has none; otherwise the password must be the account's current one (401). " +
      `Single use, even under concurrent requests. ${publicLimit}`,
    access: "public",
    limit: "invite-accept",
    body: {
      schema: acceptBody,
      document: withProperty(jsonSchema(acceptBody), "password", (current) => ({
        ...current,
        description: "For a new account: its password (15 characters to 72 bytes). For an existing account: its current password.",
      })),
      examples: { accept: { summary: "Accept", value: { token: INVITE_TOKEN, password: "correct horse battery staple" } } },
    },
    responses: {
      200: {
        description: "Joined; a token for the organization, and the organization (the invite page starts a console session in it).",
        json: {
          component: "AcceptedInvite",
          example: {
            token: "eyJhbGciOiJIUzI1NiJ9.e30.c2ln",
            user: { id: USER_ID, email: "grace@example.com", role: "member" },
            org: { id: "0193a5c4-2222-7c1d-9f3a-2b8e4d6f1a01", name: "Acme" },
          },
        },
      },
    },
    errors: [...BODY_ERRORS, 401, 404, 410, 429, 503],
    async handle({ body, req }, deps) {
      const accepted = await acceptInvite({ token: body.token, password: body.password, request: requestOrigin(req) }, deps);
      req.log.info("invite accepted", { userId: accepted.user.id, role: accepted.user.role });
      return { json: accepted, headers: noStore };
    },
  }),
  endpoint({
    method: "get",
    path: "/accept-invite",
    operationId: "acceptInvitePage",
    tag: "Invites",
    summary: "The invite page",
    description: "An HTML page for the invitee: it reads `token` from its own address, shows the organization and email, and asks for a password.",
    access: "public",
    query: [
      {
        name: "token",
        in: "query",
        required: false,
        description: "The invite token (read by the page's script, not by the server).",
        schema: { type: "string" },
      },
    ],
    responses: { 200: page("The page.", "text/html") },
    errors: [500],
    handle: ({ res }) => sendPage(res, { type: "text/html; charset=utf-8", body: acceptInviteHtml, policy: ACCEPT_INVITE_POLICY, cache: "no-store" }),
  }),
  endpoint({
    method: "get",
    path: "/accept-invite.js",
    operationId: "acceptInviteScript",
    tag: "Invites",
    summary: "The invite page's script",
    access: "public",
    responses: { 200: page("JavaScript.", "text/javascript") },
    errors: [500],
    handle: ({ res }) => sendPage(res, { type: "text/javascript; charset=utf-8", body: acceptInviteJs, policy: ACCEPT_INVITE_POLICY, cache: "no-store" }),
  }),
  endpoint({
    method: "get",
    path: "/accept-invite.css",
    operationId: "acceptInviteStyles",
    tag: "Invites",
    summary: "The invite page's styles",
    access: "public",
    responses: { 200: page("CSS.", "text/css") },
    errors: [500],
    handle: ({ res }) => sendPage(res, { type: "text/css; charset=utf-8", body: acceptInviteCss, policy: ACCEPT_INVITE_POLICY, cache: "no-store" }),
  }),
];
