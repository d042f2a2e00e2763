// joi rules for the kinds of value environment variables hold, typed with what they parse to (for `setting()`).
import Joi from "joi";

/** A yes/no variable: true/false, 1/0, yes/no or on/off. */
export function flag(): Joi.BooleanSchema<boolean> {
  return Joi.boolean().truthy("1", "yes", "on").falsy("0", "no", "off");
}

/** One of `values`, typed as their union. */
export function oneOf<const V extends string>(...values: V[]): Joi.StringSchema<V> {
  return Joi.string().valid(...values) as Joi.StringSchema<V>;
}

/**
 * A comma-separated list, entries trimmed and blanks dropped. With `item`, an entry its pattern refuses fails the
 * variable: `WORKER_TYPES names an invalid job type "Bad-Type"`.
 */
export function list(item?: { pattern: RegExp; name: string }): Joi.AnySchema<string[]> {
  const rule = Joi.string().custom((value: string, helpers) => {
    const entries = value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (!item) return entries;
    const bad = entries.find((entry) => !item.pattern.test(entry));
    return bad === undefined ? entries : helpers.message({ custom: `names an invalid ${item.name} "${bad}"` });
  });
  // joi types a custom conversion as the base rule's value; the value is the list.
  return rule as Joi.AnySchema as Joi.AnySchema<string[]>;
}

/** The http(s) URL the service is reached at, without trailing slashes, so paths append as `${url}/path`. */
export function publicUrl(): Joi.StringSchema<string> {
  return Joi.string()
    .uri({ scheme: ["http", "https"] })
    .custom((value: string) => value.replace(/\/+$/, ""));
}
