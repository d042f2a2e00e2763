// Decodes with jimp's decoder for the format whose header we checked, never a format guessed again from the
// bytes: the pixel cap was computed from that header, so the decoder must be the one that reads it. (This is
// also why Jimp.fromBuffer is not used: it re-sniffs the bytes with file-type, an ES module it loads with a
// dynamic import.) EXIF orientation is applied as Jimp.fromBuffer would.
import { defaultFormats, Jimp, type JimpInstance } from "jimp";
import { PermanentJobError } from "@conveyor/contracts";
import type { ImageFormat } from "./dimensions";
import { jpegOrientation } from "./exif-orientation";

// Not ReturnType<typeof Jimp.fromBitmap>: jimp 1.6 declares that as `InstanceType<any> & ...`, which is `any`.
export type DecodedImage = JimpInstance;

const MIME = { png: "image/png", jpeg: "image/jpeg", gif: "image/gif", bmp: "image/bmp" } as const satisfies Record<ImageFormat, string>;
const decoders = new Map(defaultFormats.map((format) => format()).map((format) => [format.mime, format]));

export async function decodeImage(data: Buffer, format: ImageFormat): Promise<DecodedImage> {
  const decoder = decoders.get(MIME[format]);
  if (!decoder?.decode) throw new PermanentJobError(`no decoder for ${format.toUpperCase()} in this build`);
  let image: DecodedImage;
  try {
    // The constructor, not Jimp.fromBitmap (typed `any`, and it copies the pixels once more). Every built-in
    // decoder is synchronous; should one become async, reading `.data` off its promise stops the compile.
    const bitmap = decoder.decode(data);
    image = new Jimp({ data: bitmap.data, width: bitmap.width, height: bitmap.height });
  } catch (error) {
    throw new PermanentJobError(`the image could not be decoded (${oneLine((error as Error).message)})`);
  }
  return format === "jpeg" ? orient(image, jpegOrientation(data)) : image;
}

// EXIF orientations 2..8 as jimp operations (jimp rotates counter-clockwise, so -90 turns clockwise). jimp's
// plugin methods change the image in place and return it, so the image itself is returned.
function orient(image: DecodedImage, orientation: number): DecodedImage {
  if (orientation === 2) image.flip({ horizontal: true });
  else if (orientation === 3) image.rotate(180);
  else if (orientation === 4) image.flip({ vertical: true });
  else if (orientation === 5) image.rotate(-90).flip({ horizontal: true });
  else if (orientation === 6) image.rotate(-90);
  else if (orientation === 7) image.rotate(-90).flip({ vertical: true });
  else if (orientation === 8) image.rotate(90);
  return image;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 200);
