// The EXIF Orientation tag (1..8) of a JPEG: cameras store pixels as the sensor saw them and say in EXIF how
// to turn them. Read here because we decode with the decoder of the format we checked (see decode.ts)
// instead of Jimp.fromBuffer, which would have applied it.

/** Orientation 1..8 from the first Exif APP1 segment's IFD0, or 1 (as stored) when absent or unreadable. */
export function jpegOrientation(data: Buffer): number {
  let offset = 2;
  while (offset + 4 <= data.length && data[offset] === 0xff) {
    const marker = data[offset + 1]!;
    if (marker === 0xda || marker === 0xd9) break; // image data: metadata is over
    const length = data.readUInt16BE(offset + 2);
    if (marker === 0xe1 && data.toString("latin1", offset + 4, offset + 10) === "Exif\0\0")
      return tiffOrientation(data.subarray(offset + 10, offset + 2 + length));
    offset += 2 + length;
  }
  return 1;
}

function tiffOrientation(tiff: Buffer): number {
  if (tiff.length < 8) return 1;
  const little = tiff.toString("latin1", 0, 2) === "II";
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd = u32(4);
  if (ifd + 2 > tiff.length) return 1;
  const entries = u16(ifd);
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return 1;
    if (u16(entry) === 0x0112) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : 1;
    }
  }
  return 1;
}
