// `npm run build -w @conveyor/client` (and `prepack`): dist/cjs (CommonJS) and dist/esm (ES modules), each with
// its declarations and a copy of the generated src/schema.d.ts (tsc does not copy .d.ts sources), so the package
// carries its own types. Plain Node: it runs from a clean checkout with only the workspace's dependencies.
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

rmSync(path.join(root, "dist"), { recursive: true, force: true });
for (const [project, dir, type] of [
  ["tsconfig.build.json", "dist/cjs", "commonjs"],
  ["tsconfig.esm.json", "dist/esm", "module"],
]) {
  execFileSync(process.execPath, [tsc, "-p", project], { cwd: root, stdio: "inherit" });
  copyFileSync(path.join(root, "src/schema.d.ts"), path.join(root, dir, "schema.d.ts"));
  // Which module system each folder's .js and .d.ts files are, whatever the consumer's package says.
  writeFileSync(path.join(root, dir, "package.json"), `${JSON.stringify({ type })}\n`);
}
