// Writes the API's OpenAPI document, as GET /openapi.json serves it on a default deployment, to a file:
//
//   npm run openapi                      (at the root: packages/client/openapi.json, which the client is generated from)
//   tsx --conditions=conveyor-source apps/api/src/cli/openapi.ts FILE
//
// The typed client is generated from this file, so nothing below the API imports the API to read its document.
import { writeFileSync } from "node:fs";
import { runMain } from "@conveyor/config";
import { endpoints } from "../endpoints";
import { loadApiConfig } from "../env";
import { buildOpenApiDocument } from "../openapi/document";

runMain(async () => {
  const file = process.argv[2];
  if (!file) throw new Error("Usage: openapi.ts FILE (where to write the document)");
  writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(loadApiConfig({}), endpoints), null, 2)}\n`);
  process.stdout.write(`Wrote the OpenAPI document to ${file}.\n`);
});
