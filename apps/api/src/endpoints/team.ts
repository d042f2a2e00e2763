// Team management (docs/reference/tenants.md#team-and-roles, docs/reference/tenants.md#team-api-for-the-console): user tokens and console sessions only; the role table decides who may do what.
import Joi from "joi";
import { ROLES, type Role } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { createInvite } from "../services/invites";
import { changeMemberRole, listInvites, listMembers, removeMember, revokeInvite, type MemberListQuery } from "../services/team";
import { emailField } from "../declarations/fields";

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

const membersQuery = Joi.object<MemberListQuery>({
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(200),
});

const roleBody = Joi.object<{ role: "admin" | "member" }>({
  role: Joi.string()
    .valid("admin", "member")
    .required()
    .messages({ "any.only": "must be admin or member: ownership is not granted or taken away by a role change" }),
});

const INVITE_ID = "0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01";
const userIdParam = { user_id: { description: "The member's user id.", schema: { type: "string", format: "uuid" } } };

export const teamEndpoints = [
  endpoint({
    method: "get",
    path: "/org/members",
    operationId: "listMembers",
    tag: "Team",
    summary: "List the organization's members",
    description:
      "Owners and admins only; a user token or a console session. In the order they joined. Without `limit`, every member; " +
      "with `limit`, one page and, while more remain, a `Link` header to the next one.",
    access: "user",
    roles: ["owner", "admin"],
    query: membersQuery,
    queryDescriptions: { limit: "Page size; without it every member is returned.", cursor: "Opaque; taken from the previous page's Link header." },
    responses: {
      200: {
        description: "The members.",
        json: { component: "Member", array: true, example: [{ id: USER_ID, email: "ada@example.com", role: "owner", joined_at: AT }] },
        headers: {
          Link: { description: 'With `limit`, while more remain: `<…/org/members?limit=…&cursor=…>; rel="next"`.', schema: { type: "string" } },
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, query }, deps) {
      const { items, next } = await listMembers({ caller, query }, deps);
      return { json: items, headers: next ? { Link: `<${deps.config.PUBLIC_URL}/org/members?${next}>; rel="next"` } : undefined };
    },
  }),
  endpoint({
    method: "patch",
    path: "/org/members/:user_id",
    operationId: "changeMemberRole",
    tag: "Team",
    summary: "Change a member's role",
    description:
      "Owners only. Makes a member an admin or a member; it applies to their next request. The owner's own role is 409 " +
      "`cannot_change_own_role`; ownership is neither granted nor taken away here (`owner` is 400, and so is another owner).",
    access: "user",
    roles: ["owner"],
    params: userIdParam,
    body: { schema: roleBody, examples: { admin: { summary: "Make an admin", value: { role: "admin" } } } },
    responses: {
      200: {
        description: "The member, with the new role.",
        json: { component: "Member", example: { id: USER_ID, email: "grace@example.com", role: "admin", joined_at: AT } },
      },
    },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 404, 409],
    async handle({ caller, params, body, req }, deps) {
      const member = await changeMemberRole({ caller, userId: params.user_id, role: body.role }, deps);
      req.log.info("member role changed", { orgId: caller.orgId, userId: member.id, role: member.role });
      return { json: member };
    },
  }),
  endpoint({
    method: "get",
    path: "/org/invites",
    operationId: "listInvites",
    tag: "Team",
    summary: "List pending invites",
    description: "Owners and admins only. Invites that can still be accepted, newest first. Their links are never shown again.",
    access: "user",
    roles: ["owner", "admin"],
    responses: {
      200: {
        description: "The pending invites.",
        json: {
          component: "PendingInvite",
          array: true,
          example: [{ id: INVITE_ID, email: "grace@example.com", role: "member", expires_at: EXPIRES, invited_by: USER_ID, created_at: AT }],
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await listInvites({ caller }, deps) };
    },
  }),
  endpoint({
    method: "delete",
    path: "/org/invites/:id",
    operationId: "revokeInvite",
    tag: "Team",
    summary: "Withdraw a pending invite",
    description: "Owners and admins only. The link stops working (410 `invite_expired`). 404 for an invite that is not pending.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("invite") },
    responses: { 204: { description: "Withdrawn." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, req }, deps) {
      await revokeInvite({ caller, id: params.id }, deps);
      req.log.info("invite withdrawn", { orgId: caller.orgId, inviteId: params.id });
      return { status: 204 };
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
      "Owners only. Removes this membership (not the user's others), revokes the member's API keys and pending invites in this " +
      "organization and ends their console sessions there. An owner cannot remove themselves (409).",
    access: "user",
    roles: ["owner"],
    params: userIdParam,
    responses: { 204: { description: "Removed." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404, 409],
    async handle({ caller, params, req }, deps) {
      await removeMember({ caller, userId: params.user_id }, deps);
      req.log.info("member removed", { orgId: caller.orgId, userId: params.user_id });
      return { status: 204 };
    },
  }),
];
