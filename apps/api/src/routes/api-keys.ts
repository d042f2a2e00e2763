// API keys (SPEC §3): managed with a user token only; a key cannot mint or list keys.
import { Router } from "express";
import Joi from "joi";
import { validate } from "../http/validate";
import { principal } from "../middleware/authenticate";
import { createApiKey, listApiKeys, revokeApiKey } from "../services/api-keys";
import type { RouteDeps } from "./index";

export const createBody = Joi.object({ name: Joi.string().trim().min(1).max(100).prefs({ convert: true }).required() });

export function apiKeyRoutes(deps: RouteDeps): Router {
  const router = Router();
  const userOnly = deps.authenticate({ accept: ["jwt"] });

  router.post("/api-keys", userOnly, async (req, res) => {
    const body = validate(createBody, req.body);
    const created = await createApiKey({ caller: principal(req), name: body.name }, deps);
    req.log.info("API key created", { apiKeyId: created.id });
    res.status(201).setHeader("Cache-Control", "no-store").json(created);
  });

  router.get("/api-keys", userOnly, async (req, res) => {
    res.json(await listApiKeys({ caller: principal(req) }, deps));
  });

  router.delete("/api-keys/:id", userOnly, async (req, res) => {
    await revokeApiKey({ caller: principal(req), id: String(req.params.id) }, deps);
    req.log.info("API key revoked", { apiKeyId: req.params.id });
    res.status(204).end();
  });

  return router;
}
