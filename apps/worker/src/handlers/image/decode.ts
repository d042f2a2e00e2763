// Decodes with jimp's decoder for the format whose header we checked, never a format guessed again from the
// bytes: the pixel cap was computed from that header, so the decoder must be the one that reads it. (This is
// also why Jimp.fromBuffer is not used: it re-sniffs the bytes with file-type, an ES module it loads with a
// dynamic import.) EXIF orientation is applied as Jimp.fromBuffer would.
import { defaultFormats, Jimp } from "jimp";
import { PermanentJobError } from "@conveyor/contracts";
import type { ImageFormat } from "./dimensions";
import { jpegOrientation } from "./exif-orientation";

export type DecodedImage = ReturnType<typeof Jimp.fromBitmap>;

const MIME = { png: "image/png", jpeg: "image/jpeg", gif: "image/gif", bmp: "image/bmp" } as const satisfies Record<ImageFormat, string>;
const decoders = new Map(defaultFormats.map((format) => format()).map((format) => [format.mime, format]));

export async function decodeImage(data: Buffer, format: ImageFormat): Promise<DecodedImage> {
  const decoder = decoders.get(MIME[format]);
  if (!decoder?.decode) throw new PermanentJobError(`no decoder for ${format.toUpperCase()} in this build`);
  let image: DecodedImage;
  try {
    image = Jimp.fromBitmap(await decoder.decode(data));
  } catch (error) {
    throw new PermanentJobError(`the image could not be decoded (${oneLine((error as Error).message)})`);
  }
  return format === "jpeg" ? orient(image, jpegOrientation(data)) : image;
}

// EXIF orientations 2..8 as jimp operations (jimp rotates counter-clockwise, so -90 turns clockwise).
function orient(image: DecodedImage, orientation: number): DecodedImage {
  if (orientation === 2) return image.flip({ horizontal: true });
  if (orientation === 3) return image.rotate(180);
  if (orientation === 4) return image.flip({ vertical: true });
  if (orientation === 5) return image.rotate(-90).flip({ horizontal: true });
  if (orientation === 6) return image.rotate(-90);
  if (orientation === 7) return image.rotate(-90).flip({ vertical: true });
  if (orientation === 8) return image.rotate(90);
  return image;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 200);
