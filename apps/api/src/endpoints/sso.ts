// Single sign-on with OpenID Connect (docs/reference/tenants.md#audit-log): an owner sets the organization's provider; people sign in through
// it (start → the provider → callback) and land in the console with a session.
import type { Request } from "express";
import Joi from "joi";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint } from "../declarations/endpoint";
import { AppError } from "../services/infrastructure/errors";
import { clearedSsoCookie, sessionCookie, sessionTokenOf, ssoCookie, ssoFlowTokenOf } from "../http/session-cookie";
import { wantsHtml } from "../pages/console/console-pages";
import { requestOrigin } from "../http/request-origin";
import { consoleReturnPath, finishSsoLogin, SsoRefusal, startSsoLogin } from "../services/sso-login";
import { deleteSsoSettings, getSsoSettings, putSsoSettings, ssoRedirectUri, type SsoInput } from "../services/sso-settings";
import { emailField } from "../declarations/fields";

const AT = "2026-11-21T09:30:00.000Z";

const domain = Joi.string()
  .trim()
  .lowercase()
  .max(253)
  .domain({ tlds: { allow: false } })
  .prefs({ convert: true });

const settingsBody = Joi.object<SsoInput>({
  issuer: Joi.string()
    .max(2000)
    .uri({ scheme: ["https", "http"] })
    .required()
    .description("The provider's issuer URL (https; http only with SSO_ALLOW_HTTP)."),
  client_id: Joi.string().min(1).max(500).required(),
  client_secret: Joi.string()
    .min(1)
    .max(2000)
    .description("Write-only: stored encrypted, never shown again. Required the first time; left out later, the stored one is kept."),
  email_domains: Joi.array().items(domain).min(1).max(50).unique().required().description("E-mail domains this provider signs in (example.com)."),
  default_role: Joi.string().valid("member", "admin").default("member").description("The role of a member made by their first sign-in."),
  enforce: Joi.boolean().default(false).description("Refuse password login and API-key creation to members other than the owner."),
});

const settingsExample = {
  issuer: "https://login.example.com",
  client_id: "conveyor",
  client_secret_set: true,
  email_domains: ["example.com"],
  default_role: "member",
  enforce: false,
  redirect_uri: "https://conveyor.example.com/auth/sso/callback",
  updated_at: AT,
};

const startQuery = Joi.object<{ email?: string; org?: string; return_to?: string }>({
  email: emailField.description("Your work e-mail: its domain picks the organization (and the provider gets it as login_hint)."),
  org: Joi.string().guid().description("Or the organization's id."),
  return_to: Joi.string().max(512).description("A console path to land on, e.g. /jobs (default /overview). Another site is refused (400)."),
})
  .xor("email", "org")
  .messages({ "object.missing": "needs email or org", "object.xor": "takes email or org, not both" });

const providerParam = (description: string) => Joi.string().max(4096).description(description);
const callbackQuery = Joi.object({
  code: providerParam("The authorization code."),
  state: providerParam("The state the start sent."),
  iss: providerParam("The issuer (RFC 9207), when the provider sends it."),
  error: providerParam("The provider's refusal, instead of a code."),
  error_description: providerParam("Its explanation."),
})
  // Providers add parameters of their own (session_state, scope…); each is a string, and only openid-client reads them.
  .pattern(/^[\w.-]{1,64}$/, providerParam("A parameter of the provider's."));

const redirect = (description: string) => ({
  description,
  headers: { Location: { description: "Where the browser goes next.", schema: { type: "string" } } },
});

/**
 * A refused sign-in: a browser goes back to the console's login page, which says why (`sso_error`); any other client
 * gets the error body (docs/reference/http.md#errors).
 */
function refuse(req: Request, error: unknown): { status: 302; location: string } {
  if (!(error instanceof AppError) || !wantsHtml(req.get("accept"), req.accepts("json", "html"))) throw error;
  const reason = error instanceof SsoRefusal ? error.reason : error.code;
  return { status: 302, location: `/login?${new URLSearchParams({ sso_error: reason })}` };
}

export const ssoEndpoints = [
  endpoint({
    method: "get",
    path: "/org/sso",
    operationId: "getSsoSettings",
    tag: "Single sign-on",
    summary: "The organization's single sign-on",
    description: "Owners only. The provider's settings without its client secret, and the redirect URI to register with it. 404 when none is set.",
    access: "user",
    roles: ["owner"],
    responses: { 200: { description: "The settings.", json: { component: "SsoSettings", example: settingsExample } } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller }, deps) {
      return { json: await getSsoSettings({ caller }, deps), headers: { "Cache-Control": "no-store" } };
    },
  }),
  endpoint({
    method: "put",
    path: "/org/sso",
    operationId: "putSsoSettings",
    tag: "Single sign-on",
    summary: "Set the organization's OpenID Connect provider",
    description:
      "Owners only. The provider's discovery document (ISSUER/.well-known/openid-configuration) and its JWKS are fetched and checked " +
      "now, through the same SSRF guard as webhooks: 400 naming what failed. The issuer must be https unless SSO_ALLOW_HTTP. " +
      "Register `redirect_uri` (PUBLIC_URL/auth/sso/callback) at the provider. Each e-mail domain belongs to one organization " +
      "(409 `sso_domain_taken`). With `enforce`, members other than the owner can no longer log in with a password, use a " +
      "password session or token, or create API keys (403 `sso_required`); the owner keeps password access to recover.",
    access: "user",
    roles: ["owner"],
    body: {
      schema: settingsBody,
      examples: {
        okta: {
          summary: "A provider for example.com",
          value: {
            issuer: "https://login.example.com",
            client_id: "conveyor",
            client_secret: "s3cr3t-from-the-provider",
            email_domains: ["example.com"],
            default_role: "member",
            enforce: false,
          },
        },
      },
    },
    responses: { 200: { description: "Saved.", json: { component: "SsoSettings", example: settingsExample } } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 409],
    async handle({ caller, body, req }, deps) {
      const saved = await putSsoSettings({ caller, settings: body }, deps);
      req.log.info("single sign-on saved", { orgId: caller.orgId, enforce: saved.enforce });
      return { json: saved, headers: { "Cache-Control": "no-store" } };
    },
  }),
  endpoint({
    method: "delete",
    path: "/org/sso",
    operationId: "deleteSsoSettings",
    tag: "Single sign-on",
    summary: "Remove the organization's single sign-on",
    description:
      "Owners only. Members log in with passwords again; accounts that single sign-on made have none and cannot log in until it is set up again. 404 when none is set.",
    access: "user",
    roles: ["owner"],
    responses: { 204: { description: "Removed." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, req }, deps) {
      await deleteSsoSettings({ caller }, deps);
      req.log.info("single sign-on removed", { orgId: caller.orgId });
      return { status: 204 };
    },
  }),
  endpoint({
    method: "get",
    path: "/auth/sso/start",
    operationId: "startSsoLogin",
    tag: "Single sign-on",
    summary: "Sign in with single sign-on",
    description:
      "Public; for a browser. Redirects to the organization's provider (authorization code flow with PKCE, state and nonce) and " +
      "sets a short-lived HttpOnly cookie that ties the sign-in to this browser. The organization is the one whose provider signs " +
      "in the e-mail's domain, or `org`. A browser is sent back to /login?sso_error=… when it cannot start; other clients get the error.",
    access: "public",
    limit: "sso",
    query: startQuery,
    responses: { 302: redirect("To the provider's authorization endpoint (or back to the login page with `sso_error`).") },
    errors: [400, 404, 429, 500, 503],
    async handle({ query, req, res }, deps) {
      try {
        const returnTo = consoleReturnPath(query.return_to);
        const started = await startSsoLogin({ email: query.email, orgId: query.org, returnTo }, deps);
        res.setHeader("Set-Cookie", ssoCookie(started.flowToken, started.maxAgeSeconds, deps.config));
        res.setHeader("Cache-Control", "no-store");
        return { status: 302, location: started.location };
      } catch (error) {
        return refuse(req, error);
      }
    },
  }),
  endpoint({
    method: "get",
    path: "/auth/sso/callback",
    operationId: "finishSsoLogin",
    tag: "Single sign-on",
    summary: "Where the provider sends the browser back",
    description:
      "Public; the provider's redirect target. The sign-in started in this browser is used once: openid-client exchanges the code " +
      "(with the PKCE verifier) and verifies the ID token (signature from the provider's JWKS, iss, aud, exp, nonce); the e-mail must " +
      "be verified and in `email_domains`. A first sign-in makes the person a member with `default_role`. Ends with a console " +
      "session cookie and a redirect into the console. Refusals: 401 `sso_failed` (a browser is sent to /login?sso_error=…).",
    access: "public",
    limit: "sso",
    query: callbackQuery,
    responses: { 302: redirect("Into the console (or back to the login page with `sso_error`).") },
    errors: [400, 401, 404, 429, 500, 503],
    async handle({ req, res }, deps) {
      res.setHeader("Cache-Control", "no-store");
      res.append("Set-Cookie", clearedSsoCookie(deps.config));
      try {
        const callbackUrl = new URL(ssoRedirectUri(deps.config));
        callbackUrl.search = new URL(req.originalUrl, "http://callback.invalid").search;
        const done = await finishSsoLogin({ flowToken: ssoFlowTokenOf(req), callbackUrl, request: requestOrigin(req), replacing: sessionTokenOf(req) }, deps);
        res.append("Set-Cookie", sessionCookie(done.session.token, done.session.maxAgeSeconds, deps.config));
        req.log.info("single sign-on succeeded", { orgId: done.orgId, userId: done.session.body.user.id });
        return { status: 302, location: `${deps.config.PUBLIC_URL}${done.returnTo}` };
      } catch (error) {
        if (error instanceof SsoRefusal) req.log.info("single sign-on refused", { reason: error.reason });
        return refuse(req, error);
      }
    },
  }),
];
