// Decode, shrink to a width, flatten onto white and encode as JPEG, with jimp 1.x (PROVIDERS.md §6b).
// Callers have already checked the byte size and the declared pixel count.
import { Jimp } from "jimp";
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
  const output = image.hasAlpha() ? new Jimp({ width: image.width, height: image.height, color: 0xffffffff }).composite(image, 0, 0) : image;
  const jpeg = await output.getBuffer("image/jpeg", { quality: options.quality });
  return { jpeg, width: output.width, height: output.height, originalWidth, originalHeight };
}
