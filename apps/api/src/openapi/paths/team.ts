// Team management, invites and the invite page (SPEC §4).
import { acceptBody, inspectQuery } from "../../routes/invites";
import { inviteBody } from "../../routes/org";
import { jsonSchema, withProperty } from "../json-schema";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, type Operation } from "../operation";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const AT = "2026-11-21T09:30:00.000Z";
const EXPIRES = "2026-11-24T09:30:00.000Z";
const INVITE_TOKEN = "pV3x9QmZl0bK7rT2sW8yN4cH6fJ1dG5aE3uI0oP9qLk";
const publicLimit = "Limited to AUTH_RATE_LIMIT_PER_MIN requests per minute per client IP.";

const acceptSchema = withProperty(jsonSchema(acceptBody), "password", (current) => ({
  ...current,
  description: "For a new account: its password (15 characters to 72 bytes). For an existing account: its current password.",
}));

const page = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });

export const teamOperations: Operation[] = [
  {
    method: "get",
    path: "/org/members",
    operationId: "listMembers",
    tag: "Team",
    summary: "List the organization's members",
    description: "Owners and admins only; user tokens only.",
    auth: "jwt",
    responses: {
      200: { description: "The members.", json: { component: "Member", array: true, example: [{ id: USER_ID, email: "ada@example.com", role: "owner", joined_at: AT }] } },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
  },
  {
    method: "post",
    path: "/org/invite",
    operationId: "invite",
    tag: "Team",
    summary: "Invite someone",
    description:
      "Owners invite admins and members, admins invite members; `owner` is never granted by invite (400). " +
      "A new invite for the same email replaces the pending one. The link is valid 72 hours, once.",
    auth: "jwt",
    body: { joi: inviteBody, examples: { member: { summary: "Invite a member", value: { email: "grace@example.com", role: "member" } } } },
    responses: {
      201: {
        description: "The invite; hand `invite_url` to the invitee.",
        json: { component: "Invite", example: { invite_url: `https://conveyor.example.com/accept-invite?token=${INVITE_TOKEN}`, email: "grace@example.com", expires_at: EXPIRES } },
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 409, 503],
  },
  {
    method: "delete",
    path: "/org/members/:user_id",
    operationId: "removeMember",
    tag: "Team",
    summary: "Remove a member",
    description: "Owners only. Removes this membership (not the user's others) and revokes the member's API keys in this organization. An owner cannot remove themselves (409).",
    auth: "jwt",
    pathParams: { user_id: { description: "The member's user id.", schema: { type: "string", format: "uuid" } } },
    responses: { 204: { description: "Removed." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404, 409],
  },
  {
    method: "get",
    path: "/invite",
    operationId: "inspectInvite",
    tag: "Invites",
    summary: "Check an invite token",
    description: `Public. What the invite page shows before asking for a password. ${publicLimit}`,
    auth: "none",
    query: inspectQuery,
    queryDescriptions: { token: "The token from the invite URL." },
    responses: { 200: { description: "The invite.", json: { component: "InviteInfo", example: { email: "grace@example.com", org_name: "Acme", expires_at: EXPIRES } } } },
    errors: [400, 404, 410, 429, 500, 503],
  },
  {
    method: "post",
    path: "/invite/accept",
    operationId: "acceptInvite",
    tag: "Invites",
    summary: "Accept an invite",
    description:
      "Public. Creates the account if the email has none; otherwise the password must be the account's current one (401). " +
      `Single use, even under concurrent requests. ${publicLimit}`,
    auth: "none",
    body: { joi: acceptBody, schema: acceptSchema, examples: { accept: { summary: "Accept", value: { token: INVITE_TOKEN, password: "correct horse battery staple" } } } },
    responses: {
      200: {
        description: "Joined; a token for the organization.",
        json: { component: "AcceptedInvite", example: { token: "eyJhbGciOiJIUzI1NiJ9.e30.c2ln", user: { id: USER_ID, email: "grace@example.com", role: "member" } } },
      },
    },
    errors: [...BODY_ERRORS, 401, 404, 410, 429, 503],
  },
  {
    method: "get",
    path: "/accept-invite",
    operationId: "acceptInvitePage",
    tag: "Invites",
    summary: "The invite page",
    description: "An HTML page for the invitee: it reads `token` from its own address, shows the organization and email, and asks for a password.",
    auth: "none",
    query: [{ name: "token", in: "query", required: false, description: "The invite token (read by the page's script, not by the server).", schema: { type: "string" } }],
    responses: { 200: page("The page.", "text/html") },
    errors: [500],
  },
  {
    method: "get",
    path: "/accept-invite.js",
    operationId: "acceptInviteScript",
    tag: "Invites",
    summary: "The invite page's script",
    auth: "none",
    responses: { 200: page("JavaScript.", "text/javascript") },
    errors: [500],
  },
  {
    method: "get",
    path: "/accept-invite.css",
    operationId: "acceptInviteStyles",
    tag: "Invites",
    summary: "The invite page's styles",
    auth: "none",
    responses: { 200: page("CSS.", "text/css") },
    errors: [500],
  },
];
