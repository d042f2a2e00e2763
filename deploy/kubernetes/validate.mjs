// Validates rendered Kubernetes manifests against the Kubernetes and KEDA schemas, offline (the schemas ship inside
// the kubernetes-models packages; no cluster, no download). Reads YAML from the files named, or from stdin:
//   kubectl kustomize deploy/kubernetes/overlays/example | node deploy/kubernetes/validate.mjs
// Prints one JSON line per object ({kind, name, ok, errors}) and exits 1 if any object is invalid or of a kind it
// has no schema for. Two checks per object: the models' JSON schemas (types, required fields, enums), and, since
// those allow any unknown field, the models' TypeScript types with the compiler's excess-property check, which
// rejects a misspelt field the way `kubectl apply --validate=strict` would.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import ts from "typescript";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The module of an object's model: kubernetes-models for the built-in API groups, @kubernetes-models/keda for KEDA. */
function modelModule(apiVersion, kind) {
  if (!/^[A-Za-z]+$/.test(kind ?? "")) return null;
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (!/^[a-z0-9.]*$/.test(group) || !/^v[0-9a-z]+$/.test(version ?? "")) return null;
  if (group === "keda.sh") return `@kubernetes-models/keda/keda.sh/${version}/${kind}`;
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

async function validate(object) {
  const kind = object?.kind;
  const name = object?.metadata?.name;
  const path = modelModule(String(object?.apiVersion ?? ""), kind);
  if (!path) return { kind, name, ok: false, errors: [`no schema for apiVersion ${object?.apiVersion} kind ${kind}`] };
  let Model;
  try {
    Model = (await import(path))[kind];
  } catch {
    return { kind, name, ok: false, errors: [`no schema for ${object.apiVersion} ${kind}`] };
  }
  try {
    new Model(object).validate();
    return { kind, name, ok: true, errors: [] };
  } catch (error) {
    const details = Array.isArray(error.errors)
      ? error.errors.map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`)
      : [];
    return { kind, name, ok: false, errors: details.length ? details : [error.message] };
  }
}

/** Unknown fields per object index: each object as a literal that must satisfy its model's interface. */
function unknownFields(objects) {
  const file = path.join(here, "__manifests__.mts");
  const lines = objects.map(({ object, module }, i) =>
    module ? `import type { I${object.kind} as T${i} } from ${JSON.stringify(module)}; export const o${i} = ${JSON.stringify(object)} satisfies T${i};` : "",
  );
  const source = lines.join("\n");
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    path.resolve(name) === file ? ts.createSourceFile(name, source, version, true) : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const found = new Map();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    if (!d.file || path.resolve(d.file.fileName) !== file || d.start === undefined) continue;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
    found.set(line, [...(found.get(line) ?? []), message]);
  }
  return found;
}

const inputs = process.argv.length > 2 ? process.argv.slice(2).map((file) => readFileSync(file, "utf8")) : [readFileSync(0, "utf8")];
const objects = inputs.flatMap((text) => loadAll(text)).filter((o) => o !== null && o !== undefined);
const results = [];
for (const object of objects) results.push(await validate(object));
const strict = unknownFields(objects.map((object, i) => ({ object, module: results[i].ok ? modelModule(object.apiVersion, object.kind) : null })));
let failed = false;
results.forEach((result, i) => {
  const extra = strict.get(i) ?? [];
  const checked = extra.length ? { ...result, ok: false, errors: [...result.errors, ...extra] } : result;
  failed ||= !checked.ok;
  process.stdout.write(`${JSON.stringify(checked)}\n`);
});
process.exit(failed ? 1 : 0);
