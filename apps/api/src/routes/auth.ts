// Accounts (SPEC §3): signup (unless ALLOW_SIGNUP=false), login, and who am I.
import { Router } from "express";
import Joi from "joi";
import { validate } from "../http/validate";
import { principal } from "../middleware/authenticate";
import { describeCaller, login, signup } from "../services/accounts";
import { dummyHash } from "../services/passwords";
import { emailField, newPasswordField, passwordField } from "./fields";
import type { RouteDeps } from "./index";

export const signupBody = Joi.object({
  email: emailField.required(),
  password: newPasswordField.required(),
  org_name: Joi.string().trim().min(1).max(200).prefs({ convert: true }).required(),
});

export const loginBody = Joi.object({
  email: emailField.required(),
  password: passwordField.required(),
  org_id: Joi.string().guid(),
});

export function authRoutes(deps: RouteDeps): Router {
  const router = Router();
  void dummyHash(deps.config.bcryptCost);

  // With signup disabled the route does not exist: the request falls through to the unknown-route 404.
  if (deps.config.allowSignup) {
    router.post("/auth/signup", deps.rateLimits.authByIp("signup"), async (req, res) => {
      const body = validate(signupBody, req.body);
      const result = await signup({ email: body.email, password: body.password, orgName: body.org_name }, deps);
      req.log.info("signed up", { userId: result.user.id, orgId: result.org.id });
      res.status(201).setHeader("Cache-Control", "no-store").json(result);
    });
  }

  router.post("/auth/login", deps.rateLimits.authByIp("login"), async (req, res) => {
    const body = validate(loginBody, req.body);
    const result = await login({ email: body.email, password: body.password, orgId: body.org_id?.toLowerCase(), guard: deps.rateLimits.failedLogins }, deps);
    res.setHeader("Cache-Control", "no-store").json(result);
  });

  router.get("/me", deps.authenticate({ accept: ["jwt"] }), async (req, res) => {
    const me = await describeCaller(principal(req), deps);
    res.json(me);
  });

  return router;
}
