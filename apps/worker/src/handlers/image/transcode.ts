// Decode, shrink to a width, flatten onto white and encode as JPEG, with jimp 1.x (docs/reference/providers.md#images).
// Callers have already checked the byte size and the declared pixel count.
import { Jimp, type JimpInstance } from "jimp";
import { decodeImage } from "./decode";
import type { ImageFormat } from "./dimensions";

export type Transcoded = { jpeg: Buffer; width: number; height: number; originalWidth: number; originalHeight: number };

export async function toJpeg(data: Buffer, format: ImageFormat, options: { width: number; quality: number }): Promise<Transcoded> {
  const image = await decodeImage(data, format);
  const originalWidth = image.width;
  const originalHeight = image.height;
  // Never upscale: a width above the original keeps the original size (enlarging only adds bytes and blur).
  if (image.width > options.width) image.resize({ w: options.width });
  // JPEG has no alpha and jimp would flatten onto black; transparent areas become white instead.
  let output: JimpInstance = image;
  if (image.hasAlpha()) {
    output = new Jimp({ width: image.width, height: image.height, color: 0xffffffff });
    // Draws in place (jimp 1.6 types its `this` return as `any`, so the result is not used).
    output.composite(image, 0, 0);
  }
  const jpeg = await output.getBuffer("image/jpeg", { quality: options.quality });
  return { jpeg, width: output.width, height: output.height, originalWidth, originalHeight };
}
