// Run by `npm run build` after tsc: copies Scalar's standalone bundle (the /docs renderer) into dist/assets.
// @scalar/api-reference is a dev dependency, so production installs (`npm ci --omit=dev`) do not have it;
// the compiled API serves this copy instead (src/pages/docs/bundle.ts).
const fs = require("node:fs");
const path = require("node:path");

const source = path.join(path.dirname(require.resolve("@scalar/api-reference")), "browser", "standalone.js");
const target = path.join(__dirname, "..", "dist", "assets", "scalar-standalone.js");
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(source, target);
process.stdout.write(`copied ${path.relative(process.cwd(), source)} -> ${path.relative(process.cwd(), target)}\n`);
