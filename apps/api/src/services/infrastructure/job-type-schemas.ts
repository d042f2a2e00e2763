// The payload schemas of organization job types (docs/reference/lifecycle.md#your-own-workers): checked once at registration (docs/reference/robustness.md#r59: size, depth,
// catastrophic regular expressions), compiled once by Ajv (JSON Schema 2020-12) and kept compiled per version of the
// type, so POST /jobs pays one validation call per payload.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020";
import safeRegex from "safe-regex2";
import type { ErrorDetail } from "./errors";

/** A schema's JSON text may be at most this long. */
export const SCHEMA_MAX_BYTES = 64 * 1024;
/** Objects and arrays nested at most this deep in a schema. */
export const SCHEMA_MAX_DEPTH = 32;
/** Regular expressions a schema may carry (pattern, patternProperties). */
const SCHEMA_MAX_PATTERNS = 200;
/** Validators kept compiled in this process (the oldest go first). */
const COMPILED_MAX = 2_000;

// One Ajv instance: it caches compiled schemas by their $id only, and ours have none, so compile() builds a new
// function each time; ours are cached below, by (org, type, version). Formats are annotations (draft 2020-12's
// default); unknown keywords are refused (strict), so a typo such as "requried" is a 400, not a schema that accepts all.
const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });

/** What is wrong with `schema` as a payload schema, as details under `path`; empty when it may be registered. */
export function checkPayloadSchema(schema: unknown, path = "payload_schema"): ErrorDetail[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [{ path, message: "must be a JSON Schema object" }];
  const text = JSON.stringify(schema);
  if (Buffer.byteLength(text) > SCHEMA_MAX_BYTES) return [{ path, message: `is larger than ${SCHEMA_MAX_BYTES} bytes` }];
  const problems: ErrorDetail[] = [];
  let patterns = 0;
  const checkPattern = (pattern: string, at: string) => {
    patterns++;
    try {
      new RegExp(pattern, "u");
    } catch {
      problems.push({ path: at, message: "is not a valid regular expression" });
      return;
    }
    // Nested quantifiers ((a+)+) backtrack exponentially on a payload that almost matches.
    if (!safeRegex(pattern)) problems.push({ path: at, message: "is a regular expression that can take exponential time (nested repetition); rewrite it" });
  };
  const walk = (node: unknown, at: string, depth: number): void => {
    if (problems.length > 20) return;
    if (depth > SCHEMA_MAX_DEPTH) {
      problems.push({ path: at, message: `nests deeper than ${SCHEMA_MAX_DEPTH} levels` });
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${at}[${i}]`, depth + 1));
      return;
    }
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (key === "pattern" && typeof value === "string") checkPattern(value, `${at}.pattern`);
      if (key === "patternProperties" && typeof value === "object" && value !== null) {
        for (const pattern of Object.keys(value)) checkPattern(pattern, `${at}.patternProperties`);
      }
      walk(value, `${at}.${key}`, depth + 1);
    }
  };
  walk(schema, path, 1);
  if (patterns > SCHEMA_MAX_PATTERNS) problems.push({ path, message: `carries more than ${SCHEMA_MAX_PATTERNS} regular expressions` });
  if (problems.length) return problems;
  try {
    ajv.compile(schema);
  } catch (error) {
    return [{ path, message: `is not a valid JSON Schema (2020-12): ${(error as Error).message}` }];
  }
  return [];
}

const compiled = new Map<string, ValidateFunction>();

/** The compiled validator of one version of a type's schema (compiled on first use, then kept). */
export function validatorFor(key: { orgId: string; name: string; version: string }, schema: Record<string, unknown>): ValidateFunction {
  const id = `${key.orgId} ${key.name} ${key.version}`;
  let validate = compiled.get(id);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
    compiled.set(id, validate);
  }
  return validate;
}

/** A payload checked against a compiled schema: ok, or a detail per bad field with its path under `payloadPath`. */
export function validateWith(validate: ValidateFunction, payload: unknown, payloadPath = "payload"): ErrorDetail[] {
  if (validate(payload)) return [];
  return (validate.errors ?? []).slice(0, 50).map((e) => {
    const pointer = e.instancePath
      .split("/")
      .slice(1)
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
    const missing = e.keyword === "required" ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    const parts = missing === undefined ? pointer : [...pointer, missing];
    const path = [payloadPath, ...parts].join(".");
    return { path, message: missing === undefined ? (e.message ?? "is invalid") : "is required" };
  });
}
