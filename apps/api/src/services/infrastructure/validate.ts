import type Joi from "joi";
import { firstPerPath } from "@conveyor/contracts";
import { validationFailed } from "./errors";

/** Each schema with the validation settings set on it, made once: given with each call, joi merges them anew every time. */
const prepared = { strict: new WeakMap<Joi.Schema, Joi.Schema>(), converting: new WeakMap<Joi.Schema, Joi.Schema>() };

function withSettings<T>(schema: Joi.Schema<T>, convert: boolean): Joi.Schema<T> {
  const made = convert ? prepared.converting : prepared.strict;
  let ready = made.get(schema);
  if (!ready) made.set(schema, (ready = schema.prefs({ abortEarly: false, convert, errors: { label: false } })));
  return ready as Joi.Schema<T>;
}

/**
 * Validates `value` (a body, a query) and returns it with defaults applied; throws 400 `validation_failed`
 * naming every bad path, prefixed with `prefix` ("" for a body, "query" for query strings).
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown, prefix = ""): T {
  // A POST without a body (no Content-Length, nothing sent) reaches here as undefined.
  if (value === undefined && prefix === "") throw validationFailed([{ path: "body", message: "is required: send a JSON object" }]);
  // Not destructured: joi types `value` as `any` when there is an error, and narrowing on the whole result keeps T.
  const outcome = withSettings(schema, prefix === "query").validate(value);
  if (!outcome.error) return outcome.value;
  throw validationFailed(
    firstPerPath(outcome.error.details.map((d) => ({ path: [prefix, ...d.path.map(String)].filter(Boolean).join(".") || "body", message: d.message }))),
  );
}
