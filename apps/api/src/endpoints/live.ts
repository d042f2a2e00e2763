// Progress and live results for front ends (docs/reference/events.md#progress-and-live-results): a job's output, and public tokens that let a browser read one
// job — GET /jobs/{id}, /output and /events — with nothing else (CORS for PUBLIC_TOKEN_ORIGINS: middleware/public-cors.ts).
import Joi from "joi";
import { OUTPUT_MAX_BYTES, PUBLIC_TOKEN_TTL_MAX_SECONDS } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { createPublicToken, deletePublicToken, getJobOutput } from "../services/live";

type TokenBody = { ttl_seconds: number };

/** `?token=`: a public token, for EventSource and links; documented and accepted on the endpoints it reads. */
export const publicTokenQuery = Joi.string()
  .max(100)
  .description("A public token of this job (POST /jobs/{id}/public-token), for clients that cannot send Authorization (EventSource).");

export const liveEndpoints = [
  endpoint({
    method: "get",
    path: "/jobs/:id/output",
    operationId: "getJobOutput",
    tag: "Jobs",
    summary: "Get a job's output",
    description:
      `Everything the job's handler wrote with ctx.output, whole, in order (job.output events carry each piece as it is written). ` +
      `Kept up to ${OUTPUT_MAX_BYTES} bytes, then cut with a marker; deleted with the job. Readable with the job's public token.`,
    access: "job_read",
    params: { id: idParam("job") },
    query: Joi.object<{ token?: string }>({ token: publicTokenQuery }),
    responses: {
      200: {
        description: "The output so far (empty when there is none).",
        json: { component: "JobOutput", example: { job_id: "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01", output: "The report covers…", bytes: 19 } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      return { json: await getJobOutput({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/jobs/:id/public-token",
    operationId: "createJobPublicToken",
    tag: "Jobs",
    summary: "Make a public token that reads one job",
    description:
      "A token a browser can hold: it reads this job (GET /jobs/{id}), its output (GET /jobs/{id}/output) and its events " +
      "(GET /jobs/{id}/events), as `Authorization: Bearer …` or `?token=`, and nothing else — every other use is 401 or 404. " +
      `It lives ttl_seconds (at most ${PUBLIC_TOKEN_TTL_MAX_SECONDS}, default 3600), until revoked, or until retention deletes the job. ` +
      "Pages of the origins in PUBLIC_TOKEN_ORIGINS may read with it across origins (CORS).",
    access: "job",
    params: { id: idParam("job") },
    body: {
      schema: Joi.object<TokenBody>({
        ttl_seconds: Joi.number().integer().min(1).max(PUBLIC_TOKEN_TTL_MAX_SECONDS).default(3600).description("How long the token lives, in seconds."),
      }),
      optional: true,
      examples: { hour: { summary: "A token for one hour", value: { ttl_seconds: 3600 } } },
    },
    responses: {
      201: {
        description: "The token; only its hash is kept, so it is shown only here.",
        json: {
          component: "PublicToken",
          example: {
            id: "0193a5c4-9a10-7c1d-9f3a-2b8e4d6f1a07",
            job_id: "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01",
            token: "cvpt_Jm0V0l0q8g6yK2Xb6m7oVvJm0V0l0q8g6yK2Xb6m7oV",
            expires_at: "2026-11-21T10:30:00.000Z",
            created_at: "2026-11-21T09:30:00.000Z",
          },
        },
      },
    },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params, body, req }, deps) {
      const token = await createPublicToken({ caller, id: params.id, ttlSeconds: body.ttl_seconds }, deps);
      req.log.info("public token created", { jobId: params.id, publicTokenId: token.id });
      return { status: 201, json: token };
    },
  }),
  endpoint({
    method: "delete",
    path: "/jobs/:id/public-tokens/:token_id",
    operationId: "revokeJobPublicToken",
    tag: "Jobs",
    summary: "Revoke a job's public token",
    description: "Refused at once on every request; a stream open with it ends within a few seconds.",
    access: "job",
    params: { id: idParam("job"), token_id: idParam("public token") },
    responses: { 204: { description: "Revoked." } },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params, req }, deps) {
      await deletePublicToken({ caller, jobId: params.id, tokenId: params.token_id }, deps);
      req.log.info("public token revoked", { jobId: params.id, publicTokenId: params.token_id });
      return { status: 204 };
    },
  }),
];
