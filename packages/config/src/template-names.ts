import { readdirSync } from "node:fs";
import { BUILT_IN_TEMPLATES, templateNamesFromFiles } from "@conveyor/contracts";
import { StartupError } from "./errors";

/**
 * The generate_pdf templates a deployment offers: the built-in ones, then the `<name>.hbs` files in TEMPLATES_DIR
 * (`dir`). The API accepts these names at enqueue and the worker checks them again, so both call this at start-up.
 * A directory that cannot be read stops the process: offering fewer templates than the operator configured would
 * turn their jobs into validation errors with no hint why.
 */
export function templateNames(dir: string | undefined): string[] {
  if (!dir) return [...BUILT_IN_TEMPLATES];
  try {
    return [...new Set([...BUILT_IN_TEMPLATES, ...templateNamesFromFiles(readdirSync(dir))])];
  } catch (error) {
    throw new StartupError(`TEMPLATES_DIR: cannot read ${dir}: ${(error as Error).message}`);
  }
}
