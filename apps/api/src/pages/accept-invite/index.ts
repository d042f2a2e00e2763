// The invite page (docs/reference/tenants.md#team-and-roles): HTML, CSS and script embedded as strings, so the compiled API needs no asset
// files next to it.
export { acceptInviteHtml } from "./html";
export { acceptInviteCss } from "./style";
export { acceptInviteJs } from "./script";

export const ACCEPT_INVITE_POLICY = [
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
