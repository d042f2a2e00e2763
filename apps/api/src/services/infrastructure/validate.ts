import type Joi from "joi";
import { firstPerPath } from "@conveyor/contracts";
import { validationFailed } from "./errors";

/**
 * Validates `value` (a body, a query) and returns it with defaults applied; throws 400 `validation_failed`
 * naming every bad path, prefixed with `prefix` ("" for a body, "query" for query strings).
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown, prefix = ""): T {
  // A POST without a body (no Content-Length, nothing sent) reaches here as undefined.
  if (value === undefined && prefix === "") throw validationFailed([{ path: "body", message: "is required: send a JSON object" }]);
  // Not destructured: joi types `value` as `any` when there is an error, and narrowing on the whole result keeps T.
  const outcome = schema.validate(value, { abortEarly: false, convert: prefix === "query", errors: { label: false } });
  if (!outcome.error) return outcome.value;
  throw validationFailed(
    firstPerPath(outcome.error.details.map((d) => ({ path: [prefix, ...d.path.map(String)].filter(Boolean).join(".") || "body", message: d.message }))),
  );
}
