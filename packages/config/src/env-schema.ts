// How an app describes its environment: one joi rule per variable, wrapped by `setting()` so that the type of the
// parsed value follows from the rule. joi's typings know a rule's value type but not whether a key may be missing,
// nor the shape of an object schema; `Setting` and `envSchema` carry both, while validation stays plain joi.
import Joi from "joi";
import { ConfigError } from "./errors";

declare const parsedType: unique symbol;

/**
 * The joi rule of one variable, carrying `T`: the type of its parsed value (`X | undefined` when it may be unset).
 * It is a joi schema at run time (so `Joi.object({ ...settings })` and `describe()` work); make one with `setting()`.
 */
export type Setting<T> = Joi.AnySchema & { readonly [parsedType]: T };

/** Named variables and their settings: what `envSchema` takes. */
export type Settings = Record<string, Setting<unknown>>;

/**
 * A default computed from the other variables: `env` holds their parsed values (converted, defaults applied),
 * except those of other computed defaults.
 */
export type ComputedDefault<T> = (env: Readonly<Record<string, unknown>>) => T;

/**
 * Declares one variable from its joi rule. The rule's value type becomes the setting's (`Joi.number()` → number,
 * `oneOf("a", "b")` → "a" | "b", `list()` → string[]), and what an unset variable means decides whether
 * `undefined` is part of it:
 *
 *     PORT: setting(Joi.number().port()).default(3000),      // number
 *     TEMPLATES_DIR: setting(Joi.string()).optional(),        // string | undefined
 *     JWT_SECRET: setting(Joi.string().min(32)).required(),   // string; unset stops the process
 */
export function setting<T>(rule: Joi.AnySchema<T>) {
  // The presence is the setting's to say, or its type would not match what parsing returns.
  if (rule._flags.presence !== undefined || rule._flags.default !== undefined) {
    throw new TypeError("setting(rule): declare optional(), required() or default() on the setting, not on its rule");
  }
  const typed = <V>(schema: Joi.AnySchema) => schema as Setting<V>;
  return {
    /** Unset is allowed and parses to undefined. */
    optional: () => typed<T | undefined>(rule),
    /** Unset is an error naming the variable ("X is required"). */
    required: () => typed<T>(rule.required()),
    /** Unset takes `value`, or what `value(env)` computes (see ComputedDefault). */
    default: (value: T | ComputedDefault<T>) => typed<T>(rule.default(value as Parameters<Joi.AnySchema["default"]>[0])),
  };
}

/** The parsed configuration of `S`: each variable's value, under the variable's own name. */
export type ConfigOf<S> = S extends Joi.ObjectSchema<infer C> ? C : S extends Settings ? { [K in keyof S]: S[K][typeof parsedType] } : never;

/** The joi object schema of an app's environment; `parseEnv` returns `C`. */
export type EnvSchema<C> = Joi.ObjectSchema<C>;

/** The schema of an environment made of `settings`: `parseEnv(envSchema(settings), env)` is a `ConfigOf<typeof settings>`. */
export function envSchema<S extends Settings>(settings: S): EnvSchema<ConfigOf<S>> {
  const entries = Object.entries(settings);
  for (const [name, rule] of entries) {
    if (!Joi.isSchema(rule)) throw new TypeError(`${name} is not a setting: end it with .optional(), .required() or .default()`);
  }
  // joi validates keys in order (and a default function declares no references for it to sort by): computed
  // defaults go last, so that they see every other variable parsed.
  const computed = ([, rule]: [string, Setting<unknown>]) => typeof rule._flags.default === "function";
  return Joi.object(Object.fromEntries([...entries.filter((e) => !computed(e)), ...entries.filter(computed)]));
}

export type Env = Record<string, string | undefined>;

/**
 * Validates `env` against `schema` (unknown variables ignored, defaults applied, strings converted) and
 * returns the typed result, or throws ConfigError naming each variable that is wrong.
 */
export function parseEnv<T>(schema: Joi.ObjectSchema<T>, env: Env): T {
  // Empty strings mean "not set", as with most twelve-factor tooling (`FOO= npm start`).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = schema.validate(present, { abortEarly: false, allowUnknown: true, stripUnknown: true, convert: true });
  if (result.error) {
    const problems = result.error.details.map((d) => `${d.path.join(".")} ${d.message.replace(/^"[^"]*" /, "")}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  return result.value;
}
