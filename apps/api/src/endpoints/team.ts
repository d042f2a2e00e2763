// Team management (SPEC §4): user tokens only; the role table decides who may do what.
import Joi from "joi";
import { ROLES, type Role } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint } from "../http/endpoint";
import { createInvite } from "../services/invites";
import { listMembers, removeMember } from "../services/team";
import { emailField } from "./fields";

const USER_ID = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const AT = "2026-11-21T09:30:00.000Z";
const EXPIRES = "2026-11-24T09:30:00.000Z";
const INVITE_TOKEN = "pV3x9QmZl0bK7rT2sW8yN4cH6fJ1dG5aE3uI0oP9qLk";

// Every role is a valid value here; the service refuses `owner` (400) and admin-by-admin (403) with reasons.
const inviteBody = Joi.object<{ email: string; role: Role }>({
  email: emailField.required(),
  role: Joi.string()
    .valid(...ROLES)
    .required(),
});

export const teamEndpoints = [
  endpoint({
    method: "get",
    path: "/org/members",
    operationId: "listMembers",
    tag: "Team",
    summary: "List the organization's members",
    description: "Owners and admins only; user tokens only.",
    access: "user",
    roles: ["owner", "admin"],
    responses: {
      200: {
        description: "The members.",
        json: { component: "Member", array: true, example: [{ id: USER_ID, email: "ada@example.com", role: "owner", joined_at: AT }] },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await listMembers({ caller }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/org/invite",
    operationId: "invite",
    tag: "Team",
    summary: "Invite someone",
    description:
      "Owners invite admins and members, admins invite members; `owner` is never granted by invite (400). " +
      "A new invite for the same email replaces the pending one. The link is valid 72 hours, once.",
    access: "user",
    roles: ["owner", "admin"],
    body: { schema: inviteBody, examples: { member: { summary: "Invite a member", value: { email: "grace@example.com", role: "member" } } } },
    responses: {
      201: {
        description: "The invite; hand `invite_url` to the invitee.",
        json: {
          component: "Invite",
          example: { invite_url: `https://conveyor.example.com/accept-invite?token=${INVITE_TOKEN}`, email: "grace@example.com", expires_at: EXPIRES },
        },
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 409, 503],
    async handle({ caller, body, req }, deps) {
      const invite = await createInvite({ caller, email: body.email, role: body.role }, deps);
      req.log.info("invite created", { orgId: caller.orgId, role: body.role });
      return { status: 201, json: invite, headers: { "Cache-Control": "no-store" } };
    },
  }),
  endpoint({
    method: "delete",
    path: "/org/members/:user_id",
    operationId: "removeMember",
    tag: "Team",
    summary: "Remove a member",
    description:
      "Owners only. Removes this membership (not the user's others) and revokes the member's API keys in this organization. An owner cannot remove themselves (409).",
    access: "user",
    roles: ["owner"],
    params: { user_id: { description: "The member's user id.", schema: { type: "string", format: "uuid" } } },
    responses: { 204: { description: "Removed." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404, 409],
    async handle({ caller, params, req }, deps) {
      await removeMember({ caller, userId: params.user_id }, deps);
      req.log.info("member removed", { orgId: caller.orgId, userId: params.user_id });
      return { status: 204 };
    },
  }),
];
