/** A configuration value that cannot be used; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A process cannot start; the message is one line saying what is wrong and how to fix it. */
export class StartupError extends Error {
  override name = "StartupError";
}
