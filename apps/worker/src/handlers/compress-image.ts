import { PermanentJobError, type CompressImagePayload, type JobHandler } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";

export function compressImageHandler(_deps: HandlerDeps): JobHandler<CompressImagePayload> {
  return async () => {
    throw new PermanentJobError("compress_image is not implemented in this build");
  };
}
