// The API reference page (GET /docs): Scalar's standalone renderer, served by the API itself, started by a
// script file rather than inline code so the page's policy can allow scripts from 'self' only.
export { docsBundle } from "./bundle";

/** The page; `bundleUrl` carries the bundle's content hash, so the bundle itself can be cached for a year. */
export function docsHtml(bundleUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <link rel="icon" href="data:,">
  <title>Conveyor API reference</title>
</head>
<body>
  <noscript>The API reference needs JavaScript. The document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
  <!-- Empty: Scalar mounts into it, and any content here would be a hydration mismatch. -->
  <div id="app"></div>
  <script src="${bundleUrl}"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;
}

// Everything Scalar would fetch from its own servers is switched off: its fonts (fonts.scalar.com; the page
// falls back to system fonts), telemetry, the AI agent and MCP panels. No proxy: "try it" calls go straight
// to this API, which the page's connect-src allows.
export const docsInitJs = `"use strict";
Scalar.createApiReference("#app", {
  url: "/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  documentDownloadType: "json",
  hideModels: false,
});
`;

/** The page's policy: scripts from this origin only; Scalar injects style elements, hence 'unsafe-inline' styles. */
export const DOCS_PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
