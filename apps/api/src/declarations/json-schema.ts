// joi → OpenAPI 3.1 Schema Objects (JSON Schema 2020-12), through joi-to-json and the schemas' own
// describe(): the document shows exactly the rules the routes validate with.
import type Joi from "joi";
import parse from "joi-to-json";

export type JsonSchema = { [key: string]: unknown };

/** The OpenAPI 3.1 schema of a joi schema. */
export function jsonSchema(schema: Joi.Schema): JsonSchema {
  return anyKeyMaps(parse(schema, "open-api-3.1") as JsonSchema);
}

/**
 * joi-to-json renders `Joi.object().pattern(regex, rule)` as `patternProperties` plus a stray property named after the
 * regex. Objects whose keys may be anything (`.pattern(/^/, rule)`, e.g. counts by job type) become what they are, a
 * map: `additionalProperties: rule`, which generated clients type as `Record<string, …>`.
 */
function anyKeyMaps<T>(node: T): T {
  if (Array.isArray(node)) return node.map((item: unknown) => anyKeyMaps(item)) as T;
  if (node === null || typeof node !== "object") return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, anyKeyMaps(value)])) as JsonSchema;
  const patterns = copy.patternProperties as Record<string, JsonSchema> | undefined;
  if (patterns && Object.keys(patterns).length === 1 && patterns["^"]) {
    const { ["/^/"]: _stray, ...properties } = (copy.properties as Record<string, JsonSchema> | undefined) ?? {};
    delete copy.patternProperties;
    copy.properties = properties;
    copy.additionalProperties = patterns["^"];
  }
  return copy as T;
}

export const ref = (component: string): JsonSchema => ({ $ref: `#/components/schemas/${component}` });

/**
 * `schema` with the property at `path` (dot-separated, through `properties` and array `items`) replaced or
 * merged: used where the converted schema needs more than joi can say (a $ref to a shared component, a
 * description of a rule enforced by custom code).
 */
export function withProperty(schema: JsonSchema, path: string, change: JsonSchema | ((current: JsonSchema) => JsonSchema)): JsonSchema {
  const [head, ...rest] = path.split(".");
  const copy: JsonSchema = { ...schema };
  if (head === "[]") {
    copy.items = rest.length ? withProperty(copy.items as JsonSchema, rest.join("."), change) : apply(copy.items as JsonSchema, change);
    return copy;
  }
  const properties = { ...((copy.properties as Record<string, JsonSchema> | undefined) ?? {}) };
  if (!properties[head!]) throw new Error(`OpenAPI: no property ${head} in ${JSON.stringify(schema).slice(0, 120)}`);
  properties[head!] = rest.length ? withProperty(properties[head!]!, rest.join("."), change) : apply(properties[head!]!, change);
  copy.properties = properties;
  return copy;
}

function apply(current: JsonSchema, change: JsonSchema | ((current: JsonSchema) => JsonSchema)): JsonSchema {
  return typeof change === "function" ? change(current) : change;
}

/** Query parameters from a joi object schema of a query string. */
export function queryParameters(schema: Joi.ObjectSchema, descriptions: Record<string, string> = {}): JsonSchema[] {
  const converted = jsonSchema(schema);
  const required = new Set((converted.required as string[] | undefined) ?? []);
  return Object.entries((converted.properties as Record<string, JsonSchema>) ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: required.has(name),
    ...(descriptions[name] ? { description: descriptions[name] } : {}),
    schema: property,
  }));
}

/**
 * A request schema without `default` keywords, each default said in its description instead. Client
 * generators (openapi-typescript with its default options) read `default` as "always present" and would make
 * such fields required in requests, while the API fills them in when they are absent.
 */
export function withoutDefaults<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => withoutDefaults(item)) as T;
  if (schema === null || typeof schema !== "object") return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema))
    if (key !== "default") copy[key] = key === "example" || key === "examples" ? value : withoutDefaults(value);
  if ("default" in schema) {
    const said = `Default: ${JSON.stringify((schema as JsonSchema).default)}.`;
    copy.description = typeof copy.description === "string" ? `${copy.description.replace(/\.?$/, ".")} ${said}` : said;
  }
  return copy as T;
}
