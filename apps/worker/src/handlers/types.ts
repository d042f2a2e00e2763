import type { Logger } from "@conveyor/logger";
import type { HandlerSettings } from "./settings";

/** What every built-in handler factory receives from the worker. */
export type HandlerDeps = {
  settings: HandlerSettings;
  /** Process logger, for operator-facing lines; job-facing lines go through ctx.log. */
  logger: Logger;
};
