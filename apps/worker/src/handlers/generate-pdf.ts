import { PermanentJobError, type GeneratePdfPayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

/** generate_pdf holds a browser shared by its jobs, so it also has a close(). */
export function generatePdfHandler(_deps: HandlerDeps): { handle: JobHandler<GeneratePdfPayload>; close(): Promise<void> } {
  return {
    handle: async () => {
      throw new PermanentJobError("generate_pdf is not implemented in this build");
    },
    close: async () => {},
  };
}
