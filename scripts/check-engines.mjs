// The engines check that matters, run by the root postinstall (so by every `npm ci`, and by `.ci/run`): every
// installed package's `engines.node` against the Node.js the repository pins (the `node` dev dependency, which npm
// scripts run on), not against the Node.js that happens to run npm itself. npm checks engines against its own
// process.version and has no setting to check another, so on a machine whose system Node is older it warns
// EBADENGINE for packages that never run on it; the project's .npmrc hides npm's warnings for that reason
// (docs/decisions/2026-11-28-supported-runtime-issue-31.md) and this script fails the install instead when a package really does not fit.
//
// Plain JavaScript on purpose: it runs before anything is compiled, on the pinned node from node_modules/.bin.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import semver from "semver";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const readJson = (file) => JSON.parse(readFileSync(path.join(root, file), "utf8"));

/**
 * Packages whose `engines.node` excludes the pinned Node but that are known to work on it, each with the reason.
 * Keyed by name@version: a new version is checked again. Keep this list short and say why in a docs/decisions/ record.
 */
const ACCEPTED = {
  // A dev dependency (tests parse our webhooks with it). Its range `>=20 <=24` is an upper bound set before Node 26
  // existed, not a known incompatibility: its tests (webhooks.test.ts, webhook-delivery.test.ts) pass on Node 26.
  "cloudevents@10.0.0": "upper bound set before Node 26; our webhook tests pass with it on Node 26",
};

const pinned = readJson("package.json").devDependencies.node;
const failures = [];

if (process.versions.node !== pinned) {
  failures.push(
    `npm scripts run on Node ${process.versions.node} (${process.execPath}), but the repository pins Node ${pinned}: ` +
      "node_modules/.bin/node is missing or not first on PATH. Run `npm ci` again from the repository's root.",
  );
}

// Every installed package (the lockfile names them; what is not on disk, like another platform's optional binary,
// was not installed and cannot run). The installed manifest is what Node will load, so its engines are read.
const installed = Object.keys(readJson("package-lock.json").packages).filter((at) => at !== "");
const accepted = [];
for (const at of installed) {
  const manifest = path.join(root, at, "package.json");
  if (!existsSync(manifest)) continue;
  const { name, version, engines } = JSON.parse(readFileSync(manifest, "utf8"));
  const range = engines && typeof engines === "object" && !Array.isArray(engines) ? engines.node : undefined;
  if (!range || semver.satisfies(pinned, range, { includePrerelease: true })) continue;
  const key = `${name}@${version}`;
  if (ACCEPTED[key]) accepted.push(`${key} (engines.node ${range}): ${ACCEPTED[key]}`);
  else failures.push(`${key} at ${at} requires Node ${range}; the repository pins Node ${pinned}.`);
}

for (const line of accepted) process.stdout.write(`engines: accepted ${line}\n`);
if (failures.length) {
  process.stderr.write(`engines check failed (the pinned Node is ${pinned}):\n${failures.map((line) => `  ${line}\n`).join("")}`);
  process.exit(1);
}
process.stdout.write(`engines: every installed package accepts Node ${pinned}, which npm scripts run on\n`);
