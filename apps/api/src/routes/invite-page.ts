// GET /accept-invite?token=…: the page an invitee opens. It holds no secret itself; its script reads the
// token from the address bar and calls GET /invite and POST /invite/accept. The access log records the
// path only, so the token never reaches a log line.
import { Router, type Response } from "express";
import { acceptInviteCss, acceptInviteHtml, acceptInviteJs } from "../pages/accept-invite";

const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  // data: only for the empty favicon, which spares the browser a request for /favicon.ico.
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function send(res: Response, type: string, body: string): void {
  res.setHeader("Content-Type", type);
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Content-Security-Policy", PAGE_POLICY);
  res.send(body);
}

export function invitePageRoutes(): Router {
  const router = Router();
  router.get("/accept-invite", (_req, res) => send(res, "text/html; charset=utf-8", acceptInviteHtml));
  router.get("/accept-invite.js", (_req, res) => send(res, "text/javascript; charset=utf-8", acceptInviteJs));
  router.get("/accept-invite.css", (_req, res) => send(res, "text/css; charset=utf-8", acceptInviteCss));
  return router;
}
