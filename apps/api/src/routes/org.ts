// Team management (SPEC §4): user tokens only; the role table decides who may do what.
import { Router } from "express";
import Joi from "joi";
import { ROLES } from "@conveyor/contracts";
import { validate } from "../http/validate";
import { principal, requireRole } from "../middleware/authenticate";
import { createInvite } from "../services/invites";
import { listMembers, removeMember } from "../services/team";
import { emailField } from "./fields";
import type { RouteDeps } from "./index";

// Every role is a valid value here; the service refuses `owner` (400) and admin-by-admin (403) with reasons.
export const inviteBody = Joi.object({ email: emailField.required(), role: Joi.string().valid(...ROLES).required() });

export function orgRoutes(deps: RouteDeps): Router {
  const router = Router();
  const userOnly = deps.authenticate({ accept: ["jwt"] });

  router.get("/org/members", userOnly, requireRole("owner", "admin"), async (req, res) => {
    res.json(await listMembers({ caller: principal(req) }, deps));
  });

  router.post("/org/invite", userOnly, requireRole("owner", "admin"), async (req, res) => {
    const body = validate(inviteBody, req.body);
    const invite = await createInvite({ caller: principal(req), email: body.email, role: body.role }, deps);
    req.log.info("invite created", { orgId: principal(req).orgId, role: body.role });
    res.status(201).setHeader("Cache-Control", "no-store").json(invite);
  });

  router.delete("/org/members/:user_id", userOnly, requireRole("owner"), async (req, res) => {
    await removeMember({ caller: principal(req), userId: String(req.params.user_id) }, deps);
    req.log.info("member removed", { orgId: principal(req).orgId, userId: req.params.user_id });
    res.status(204).end();
  });

  return router;
}
