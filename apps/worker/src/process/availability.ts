// Which built-in types this worker serves but cannot run on this machine, and why: said once at start-up, so a
// deployment learns it from the log rather than from its first failed job (docs/reference/operations.md#supported-runtime). The worker still starts and
// still serves them — their jobs fail permanently naming what is missing, as they always did — because a
// deployment may run only the types it has configured.
import { accessSync, constants } from "node:fs";
import { catalog, type BuiltInType } from "@conveyor/contracts";

export type Unavailable = { type: BuiltInType; reason: string };

/** True when `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The served built-in types that cannot run: generate_pdf without an executable Chromium at
 * PUPPETEER_EXECUTABLE_PATH, and any type missing one of the settings its catalog entry declares.
 */
export function unavailableTypes(
  types: readonly BuiltInType[],
  settings: Record<string, unknown> & { PUPPETEER_EXECUTABLE_PATH: string },
  executable: (path: string) => boolean = isExecutable,
): Unavailable[] {
  return types.flatMap((type) => {
    const reasons: string[] = [];
    if (type === "generate_pdf" && !executable(settings.PUPPETEER_EXECUTABLE_PATH)) {
      reasons.push(`no Chromium at ${settings.PUPPETEER_EXECUTABLE_PATH} (install chromium, or set PUPPETEER_EXECUTABLE_PATH)`);
    }
    const missing = catalog[type].settings.filter((name) => settings[name] === undefined || settings[name] === null || settings[name] === "");
    if (missing.length) reasons.push(`${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set`);
    return reasons.length ? [{ type, reason: reasons.join("; ") }] : [];
  });
}

/** The one start-up line, or undefined when every served built-in type can run. */
export function unavailableMessage(unavailable: readonly Unavailable[]): string | undefined {
  if (!unavailable.length) return undefined;
  return `built-in types that cannot run on this machine (their jobs fail naming what is missing): ${unavailable.map((u) => `${u.type}: ${u.reason}`).join(" · ")}`;
}
