// compress_image: download a user-supplied image through the SSRF guard (bytes capped while streaming, pixels
// capped from the header before decoding), shrink it to `width`, re-encode as JPEG and store the artifact.
import { urlPolicy } from "@conveyor/config";
import { PermanentJobError, type CompressImagePayload, type JobHandler } from "@conveyor/contracts";
import { readHeader, SUPPORTED_FORMATS } from "./image/dimensions";
import { downloadImage } from "./image/download";
import { toJpeg } from "./image/transcode";
import { deadline } from "./net/failures";
import { createSsrfGuard, type NetOptions } from "@conveyor/net";
import type { HandlerDeps } from "./types";

export function compressImageHandler(deps: HandlerDeps, net: NetOptions = {}): JobHandler<CompressImagePayload> {
  const { IMAGE_MAX_BYTES: maxBytes, IMAGE_MAX_PIXELS: maxPixels, PROVIDER_TIMEOUT_MS: timeoutMs } = deps.settings;
  const guard = createSsrfGuard({ policy: urlPolicy(deps.settings), ...net });

  return async (payload, ctx) => {
    // One budget for every hop and the whole body: PROVIDER_TIMEOUT_MS.
    const time = deadline(ctx.signal, timeoutMs);
    const data = await downloadImage(guard, payload.url, { maxBytes, time, log: ctx.log });

    const header = readHeader(data);
    if (!header.format) throw new PermanentJobError(`the download is not a supported image (${SUPPORTED_FORMATS})`);
    if (!header.size) throw new PermanentJobError(`the ${header.format.toUpperCase()} header is truncated or corrupt`);
    const { width, height } = header.size;
    const pixels = width * height;
    if (pixels === 0) throw new PermanentJobError(`the ${header.format.toUpperCase()} header declares an empty ${width}×${height} image`);
    if (pixels > maxPixels) {
      throw new PermanentJobError(`the image declares ${width}×${height} = ${pixels} pixels, over IMAGE_MAX_PIXELS (${maxPixels}); not decoded`);
    }
    ctx.log("info", `downloaded a ${width}×${height} ${header.format.toUpperCase()} of ${data.length} bytes`);
    ctx.progress(0.3, "Downloaded");
    ctx.signal.throwIfAborted();

    const out = await toJpeg(data, header.format, { width: payload.width, quality: payload.quality });
    ctx.progress(0.9, "Compressed");
    await ctx.saveArtifact({ contentType: "image/jpeg", filename: `${stem(payload.url)}.jpg`, data: out.jpeg });
    ctx.log("info", `stored a ${out.width}×${out.height} JPEG of ${out.jpeg.length} bytes (quality ${payload.quality})`);
    ctx.progress(1, "Stored");
    return {
      width: out.width,
      height: out.height,
      original_width: out.originalWidth,
      original_height: out.originalHeight,
      original_bytes: data.length,
      bytes: out.jpeg.length,
      content_type: "image/jpeg",
    };
  };
}

/** A file name from the URL's last path segment, reduced to safe characters ("photo.png" → "photo"). */
function stem(raw: string): string {
  const segment = new URL(raw).pathname.split("/").pop() ?? "";
  const name = segment
    .replace(/\.[^.]*$/, "")
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return name || "image";
}
