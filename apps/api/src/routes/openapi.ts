// GET /openapi.json: the document is built once per app, on first request, and served as the same text after.
import { Router } from "express";
import type { AppDeps } from "../context";
import { buildOpenApiDocument } from "../openapi/document";

export function openApiRoutes({ config }: Pick<AppDeps, "config">): Router {
  const router = Router();
  let text: string | undefined;
  router.get("/openapi.json", (_req, res) => {
    text ??= JSON.stringify(buildOpenApiDocument(config));
    res.status(200).type("application/json").setHeader("Cache-Control", "no-cache").send(text);
  });
  return router;
}
