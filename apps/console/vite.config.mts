// The console's build: one entry, route-split chunks (the overview's charts load with their page), hashed file
// names under assets/ (the API serves them for a year), no inline scripts (the page's policy forbids them).
// `vite build --ssr` (the build script's second step) builds the first rows the API writes into /jobs' HTML
// (src/first-page-server.tsx) for Node: one CommonJS file with its dependencies in it, dist/server/first-page.cjs.
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defaultServerConditions, defineConfig } from "vite";

/** The API `npm run dev` talks to (npm start runs it here). */
const API = "http://localhost:3000";

export default defineConfig(({ isSsrBuild }) => ({
  plugins: [react()],
  // The client package is TypeScript source in this repository (its "conveyor-source" export).
  // One React, whichever workspace asked for it.
  resolve: { conditions: ["conveyor-source", ...defaultClientConditions], dedupe: ["react", "react-dom"] },
  // The server's file carries React, Mantine and the router it renders with: the API needs nothing of the console's.
  ssr: { noExternal: true, resolve: { conditions: ["conveyor-source", ...defaultServerConditions] } },
  build: isSsrBuild
    ? {
        outDir: "dist/server",
        target: "node20",
        rollupOptions: { output: { format: "cjs", entryFileNames: "first-page.cjs" } },
      }
    : {
        outDir: "dist",
        assetsDir: "assets",
        target: "es2022",
        // Every asset is a file: an inlined data: font or image would need a wider policy.
        assetsInlineLimit: 0,
        chunkSizeWarningLimit: 600,
      },
  // `npm run dev -w @conveyor/console`: the page from Vite, everything else from the API (same origin for the cookie).
  server: {
    proxy: {
      "^/(auth|me|jobs|queues|rate-limits|schedules|org|api-keys|webhook-endpoints|events|invite|accept-invite|docs|openapi\\.json)": {
        target: API,
        bypass: (req) => (req.headers.accept?.includes("text/html") ? "/index.html" : undefined),
      },
    },
  },
}));
