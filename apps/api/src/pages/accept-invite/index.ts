// The invite page (SPEC §4): HTML, CSS and script embedded as strings, so the compiled API needs no asset
// files next to it.
export { acceptInviteHtml } from "./html";
export { acceptInviteCss } from "./style";
export { acceptInviteJs } from "./script";
