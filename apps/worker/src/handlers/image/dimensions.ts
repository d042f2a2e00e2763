// Width and height read from an image's header bytes, before any decoder runs: a 40-byte file may declare a
// 100 000 × 100 000 canvas, and decoding it would allocate 40 GB. Only the formats we let jimp decode.

export type ImageFormat = "png" | "jpeg" | "gif" | "bmp";
type Size = { width: number; height: number };
/** `format` is null for bytes of no supported format; `size` is null when the header is cut short or garbled. */
export type HeaderInfo = { format: ImageFormat | null; size: Size | null };

export const SUPPORTED_FORMATS = "PNG, JPEG, GIF, BMP";

export function readHeader(data: Buffer): HeaderInfo {
  const format = sniff(data);
  return { format, size: format ? readers[format](data) : null };
}

function sniff(data: Buffer): ImageFormat | null {
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47 && data.readUInt32BE(4) === 0x0d0a1a0a) return "png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "jpeg";
  if (data.length >= 6 && /^GIF8[79]a$/.test(data.toString("latin1", 0, 6))) return "gif";
  if (data.length >= 2 && data.toString("latin1", 0, 2) === "BM") return "bmp";
  return null;
}

const readers: Record<ImageFormat, (data: Buffer) => Size | null> = {
  // The first chunk must be IHDR: width and height as big-endian 32-bit at bytes 16 and 20.
  png: (data) => (data.length >= 24 && data.toString("latin1", 12, 16) === "IHDR" ? { width: data.readUInt32BE(16), height: data.readUInt32BE(20) } : null),
  // Logical screen size; jimp decodes the first frame onto a canvas of exactly this size.
  gif: (data) => (data.length >= 10 ? { width: data.readUInt16LE(6), height: data.readUInt16LE(8) } : null),
  bmp: (data) => {
    if (data.length < 26) return null;
    // The 12-byte OS/2 core header has 16-bit sizes; every later header has signed 32-bit ones (negative = top-down).
    if (data.readUInt32LE(14) === 12) return { width: data.readUInt16LE(18), height: data.readUInt16LE(20) };
    return { width: Math.abs(data.readInt32LE(18)), height: Math.abs(data.readInt32LE(22)) };
  },
  jpeg: readJpegSize,
};

// Walks the marker segments to the first start-of-frame (SOF0..SOF15 except DHT, JPG and DAC).
function readJpegSize(data: Buffer): Size | null {
  let offset = 2;
  while (offset + 4 <= data.length) {
    if (data[offset] !== 0xff) return null;
    const marker = data[offset + 1]!;
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2; // markers without a length
      continue;
    }
    const length = data.readUInt16BE(offset + 2);
    if (length < 2) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return offset + 9 <= data.length ? { height: data.readUInt16BE(offset + 5), width: data.readUInt16BE(offset + 7) } : null;
    if (marker === 0xda || marker === 0xd9) return null; // scan data or end before any frame header
    offset += 2 + length;
  }
  return null;
}
