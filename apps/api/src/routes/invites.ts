// Public invite endpoints (SPEC §4): check a token, accept it. No credential; limited per client IP.
import { Router } from "express";
import Joi from "joi";
import { validate } from "../http/validate";
import { acceptInvite, inspectInvite } from "../services/invites";
import { passwordField } from "./fields";
import type { RouteDeps } from "./index";

// Length rules for a new account's password are applied by the service: an existing account's password
// is only compared.
const tokenField = Joi.string().min(1).max(200);
export const inspectQuery = Joi.object({ token: tokenField.required() });
export const acceptBody = Joi.object({ token: tokenField.required(), password: passwordField.required() });

export function inviteRoutes(deps: RouteDeps): Router {
  const router = Router();

  router.get("/invite", deps.rateLimits.authByIp("invite-check"), async (req, res) => {
    const query = validate(inspectQuery, req.query, "query");
    res.setHeader("Cache-Control", "no-store");
    res.json(await inspectInvite({ token: query.token }, deps));
  });

  router.post("/invite/accept", deps.rateLimits.authByIp("invite-accept"), async (req, res) => {
    const body = validate(acceptBody, req.body);
    const accepted = await acceptInvite({ token: body.token, password: body.password, guard: deps.rateLimits.failedLogins }, deps);
    req.log.info("invite accepted", { userId: accepted.user.id, role: accepted.user.role });
    res.setHeader("Cache-Control", "no-store");
    res.json(accepted);
  });

  return router;
}
