// Validates an OpenAPI document read from stdin with @seriousme/openapi-schema-validator, which is ESM-only
// and reads its schemas relative to import.meta.url: it runs here, in plain Node, not inside Jest.
// Prints {valid, version, errors} as JSON.
import { Validator } from "@seriousme/openapi-schema-validator";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(input));
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null }));
