// Operator plugins (WORKER_PLUGINS): modules exporting `{type, handle(payload: Buffer, ctx)}`, as default or
// named exports. A plugin that cannot be loaded stops the worker at start with one line naming it.
import { existsSync } from "node:fs";
import path from "node:path";
import { StartupError } from "@conveyor/config";
import { isBuiltInType, TYPE_NAME_PATTERN, type JobPlugin } from "@conveyor/contracts";

export function loadPlugins(specifiers: readonly string[], cwd = process.cwd()): JobPlugin[] {
  const plugins: JobPlugin[] = [];
  for (const specifier of specifiers) {
    // A path to a file (relative to the working directory), else a package name.
    const local = path.resolve(cwd, specifier);
    const resolved = existsSync(local) ? local : specifier;
    let loaded: unknown;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is named at run time (WORKER_PLUGINS), and loads synchronously
      loaded = require(resolved);
    } catch (error) {
      throw new StartupError(`WORKER_PLUGINS: cannot load ${specifier}: ${(error as Error).message.split("\n")[0]}`);
    }
    const candidate = ((loaded as { default?: unknown })?.default ?? loaded) as Partial<JobPlugin>;
    if (typeof candidate?.type !== "string" || typeof candidate.handle !== "function") {
      throw new StartupError(`WORKER_PLUGINS: ${specifier} must export {type: string, handle(payload, ctx)}`);
    }
    if (!TYPE_NAME_PATTERN.test(candidate.type)) {
      throw new StartupError(`WORKER_PLUGINS: ${specifier} declares type "${candidate.type}", which is not a valid type name (lower-case letters, digits, _)`);
    }
    if (isBuiltInType(candidate.type)) {
      throw new StartupError(`WORKER_PLUGINS: ${specifier} declares type "${candidate.type}", which is a built-in type`);
    }
    if (plugins.some((p) => p.type === candidate.type)) {
      throw new StartupError(`WORKER_PLUGINS: two plugins declare type "${candidate.type}"`);
    }
    plugins.push({ type: candidate.type, handle: candidate.handle.bind(candidate) });
  }
  return plugins;
}
