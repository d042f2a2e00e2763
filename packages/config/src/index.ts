// Each app describes its environment with joi and parses it once at boot. This package holds the parsing
// rules every app shares and the variables they have in common; no other code reads process.env.
import Joi from "joi";

export { Joi };

/** A configuration value that cannot be used; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export type Env = Record<string, string | undefined>;

/**
 * Validates `env` against `schema` (unknown variables ignored, defaults applied, strings converted) and
 * returns the typed result, or throws ConfigError naming each variable that is wrong.
 */
export function parseEnv<T>(schema: Joi.ObjectSchema<T>, env: Env): T {
  // Empty strings mean "not set", as with most twelve-factor tooling (`FOO= npm start`).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const { value, error } = schema.validate(present, { abortEarly: false, allowUnknown: true, stripUnknown: true, convert: true });
  if (error) {
    const problems = error.details.map((d) => `${d.path.join(".")} ${d.message.replace(/^"[^"]*" /, "")}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  return value;
}

const boolean = () => Joi.boolean().truthy("1", "yes", "on").falsy("0", "no", "off");

/** Variables both the API and the worker read, with their defaults (SPEC §7). */
export const sharedEnv = {
  NODE_ENV: Joi.string().valid("development", "production", "test").default("development"),
  LOG_LEVEL: Joi.string().valid("error", "warn", "info", "debug").default("info"),
  DATABASE_URL: Joi.string().uri({ scheme: ["postgres", "postgresql"] }).default("postgresql://postgres@localhost:5432/conveyor"),
  /** Connections in this process' Postgres pool. */
  DATABASE_POOL_SIZE: Joi.number().integer().min(1).max(200).default(10),
  REDIS_URL: Joi.string().uri({ scheme: ["redis", "rediss"] }).default("redis://localhost:6379"),
  REDIS_PREFIX: Joi.string().pattern(/^[A-Za-z0-9_.-]{1,64}$/).default("conveyor"),
  RETRY_BASE_MS: Joi.number().integer().min(1).max(3_600_000).default(1000),
  PUBLIC_URL: Joi.string().uri({ scheme: ["http", "https"] }),
  WEBHOOK_ALLOW_HTTP: boolean().default(false),
  ALLOW_PRIVATE_NETWORK: boolean().default(false),
  TEMPLATES_DIR: Joi.string(),
} as const;

export { boolean as booleanVar };

/** A connection URL with its password replaced, safe to print or log. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}

/**
 * Loads `.env` from the working directory into process.env when the file exists (development convenience).
 * Variables already set win over the file.
 */
export function loadDotEnv(file = ".env"): void {
  try {
    process.loadEnvFile(file);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
}

/** A process cannot start; the message is one line saying what is wrong and how to fix it. */
export class StartupError extends Error {
  override name = "StartupError";
}

/**
 * Runs a process' main function. A ConfigError or StartupError ends the process with its one-line message
 * and exit code 1, without a stack trace; anything else is a bug and is printed in full.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError || error instanceof StartupError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`Fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
