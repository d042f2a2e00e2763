// Each app describes its environment with joi and parses it once at boot. This package holds the typed settings
// layer, the variables the apps have in common, and start-up helpers; no other code reads process.env.
import Joi from "joi";
import { maskDatabaseUrl } from "./database-url";
import { ConfigError, StartupError } from "./errors";

export { Joi };
export { ConfigError, StartupError } from "./errors";
export { envSchema, parseEnv, setting, type ComputedDefault, type ConfigOf, type Env, type EnvSchema, type Setting, type Settings } from "./env-schema";
export { flag, list, oneOf, publicUrl } from "./rules";
export { quotaDefaults, sharedEnv, urlPolicy, usesDevelopmentWebhookKey, webhookSecretsKey, type SharedConfig } from "./shared-env";
export { templateNames } from "./template-names";
export { databaseUrl, maskDatabaseUrl, parseDatabaseUrl, SESSION_ATTRS, type DatabaseUrl, type SessionAttrs } from "./database-url";

/** A connection URL with its password replaced, safe to print or log. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    // A multi-host Postgres URL (h1:5432,h2:5432) is no WHATWG URL.
    if (/^postgres(ql)?:\/\//i.test(url)) return maskDatabaseUrl(url);
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
