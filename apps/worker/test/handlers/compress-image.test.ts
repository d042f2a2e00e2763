// compress_image against real local image servers (HTTP, and HTTPS with a certificate made by openssl). The
// servers are on loopback, so ALLOW_PRIVATE_NETWORK=true here and host names come from an injected resolver;
// the guard's refusals with the guard on are in ssrf-guard.test.ts.
import { Writable } from "node:stream";
import type { Env } from "@conveyor/config";
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import { createLogger } from "@conveyor/logger";
import { intToRGBA, Jimp } from "jimp";
import { loadWorkerConfig } from "../../src/env";
import { compressImageHandler } from "../../src/handlers/compress-image";
import { decodeImage } from "../../src/handlers/image/decode";
import { readHeader } from "../../src/handlers/image/dimensions";
import type { NetOptions, Resolver } from "@conveyor/net";
import type { HandlerDeps } from "../../src/handlers/types";
import { endless, hang, redirect, selfSignedCertificate, serve, startImageServer, type RouteServer, type TestCertificate } from "@conveyor/testkit/fakes";
import { handlerContext } from "../support/handler-context";

const local: Env = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };

function deps(env: Env): HandlerDeps {
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  return { settings: loadWorkerConfig(env), logger: createLogger({ service: "test", stream: discard }) };
}

/** Every *.test name resolves to loopback; the names it was asked for are kept in order. */
function loopbackResolver(): Resolver & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign(async (hostname: string) => (asked.push(hostname), ["127.0.0.1"]), { asked });
}

function compress(env: Env, url: string, options: { width?: number; quality?: number; net?: NetOptions } = {}) {
  const ctx = handlerContext({ type: "compress_image" });
  const run = compressImageHandler(deps(env), options.net)({ url, width: options.width ?? 200, quality: options.quality ?? 80 }, ctx);
  return { ctx, run };
}

/** The artifact as a JPEG (its header says so) decoded into pixels. */
async function decodeJpeg(data: Buffer) {
  expect(readHeader(data).format).toBe("jpeg");
  return decodeImage(data, "jpeg");
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

describe("compress_image handler", () => {
  let server: RouteServer;
  let png: Buffer; // 400×300, transparent with an opaque red centre
  let jpeg: Buffer; // 640×480, opaque blue
  beforeAll(async () => {
    server = await startImageServer();
    const transparent = new Jimp({ width: 400, height: 300, color: 0x00000000 });
    for (let x = 150; x < 250; x++) for (let y = 100; y < 200; y++) transparent.setPixelColor(0xff0000ff, x, y);
    png = await transparent.getBuffer("image/png");
    jpeg = await new Jimp({ width: 640, height: 480, color: 0x2040c0ff }).getBuffer("image/jpeg", { quality: 90 });
    server.route("/photo.png", serve(png, "image/png"));
    server.route("/photo.jpg", serve(jpeg, "image/jpeg"));
  });
  afterEach(() => {
    server.hits.length = 0;
  });
  afterAll(() => server.close());

  describe("success", () => {
    it("shrinks a transparent PNG to the width, keeps the aspect, flattens onto white and stores a JPEG", async () => {
      const { ctx, run } = compress(local, `${server.url}/photo.png?sig=abc`, { width: 200, quality: 85 });
      const result = await run;

      expect(result).toEqual({
        width: 200,
        height: 150,
        original_width: 400,
        original_height: 300,
        original_bytes: png.length,
        bytes: ctx.artifact!.data.length,
        content_type: "image/jpeg",
      });
      expect(ctx.artifact).toMatchObject({ contentType: "image/jpeg", filename: "photo.jpg" });
      expect(ctx.progressReports.map((p) => p.fraction)).toEqual([0.3, 0.9, 1]);
      const decoded = await decodeJpeg(ctx.artifact!.data);
      expect([decoded.width, decoded.height]).toEqual([200, 150]);
      const corner = intToRGBA(decoded.getPixelColor(5, 5));
      expect(Math.min(corner.r, corner.g, corner.b)).toBeGreaterThan(245); // white, not black
      const centre = intToRGBA(decoded.getPixelColor(100, 75));
      expect(centre.r).toBeGreaterThan(200);
      expect(Math.max(centre.g, centre.b)).toBeLessThan(60);
    });

    it("keeps the aspect ratio of a JPEG", async () => {
      const { ctx, run } = compress(local, `${server.url}/photo.jpg`, { width: 320 });
      expect(await run).toMatchObject({ width: 320, height: 240, original_width: 640, original_height: 480, original_bytes: jpeg.length });
      const decoded = await decodeJpeg(ctx.artifact!.data);
      expect([decoded.width, decoded.height]).toEqual([320, 240]);
    });

    it("never upscales: a width above the original keeps the original size", async () => {
      const { run } = compress(local, `${server.url}/photo.jpg`, { width: 2000 });
      expect(await run).toMatchObject({ width: 640, height: 480, original_width: 640, original_height: 480 });
    });

    it("encodes at the requested quality", async () => {
      const low = await compress(local, `${server.url}/photo.png`, { width: 400, quality: 5 }).run;
      const high = await compress(local, `${server.url}/photo.png`, { width: 400, quality: 100 }).run;
      expect((low as { bytes: number }).bytes).toBeLessThan((high as { bytes: number }).bytes);
    });

    it("turns a JPEG the way its EXIF Orientation says (6: rotate 90° clockwise)", async () => {
      const sideways = new Jimp({ width: 64, height: 32, color: 0x0000ffff });
      for (let x = 0; x < 32; x++) for (let y = 0; y < 32; y++) sideways.setPixelColor(0xff0000ff, x, y); // left half red
      server.route("/sideways.jpg", serve(withExifOrientation(await sideways.getBuffer("image/jpeg", { quality: 95 }), 6), "image/jpeg"));
      const { ctx, run } = compress(local, `${server.url}/sideways.jpg`, { width: 100 });
      expect(await run).toMatchObject({ width: 32, height: 64, original_width: 32, original_height: 64 });
      const decoded = await decodeJpeg(ctx.artifact!.data);
      expect(intToRGBA(decoded.getPixelColor(16, 8)).r).toBeGreaterThan(200); // the left edge is now the top
      expect(intToRGBA(decoded.getPixelColor(16, 56)).b).toBeGreaterThan(200);
    });

    it.each(["image/gif", "image/bmp"] as const)("reads %s input", async (mime) => {
      const data = await new Jimp({ width: 60, height: 40, color: 0x00ff00ff }).getBuffer(mime);
      server.route("/input", serve(data, mime));
      expect(await compress(local, `${server.url}/input`, { width: 30 }).run).toMatchObject({ width: 30, height: 20, original_width: 60, original_height: 40 });
    });
  });

  describe("redirects", () => {
    it("follows up to 3 redirects, resolving and checking every hop", async () => {
      const resolve = loopbackResolver();
      server.route("/r1", redirect(`http://hop2.test:${server.port}/r2`, 301));
      server.route("/r2", redirect(`http://hop3.test:${server.port}/r3`, 307));
      server.route("/r3", redirect("/photo.png", 308)); // relative: same host
      const { ctx, run } = compress(local, `http://hop1.test:${server.port}/r1`, { net: { resolve } });
      expect(await run).toMatchObject({ width: 200, original_width: 400 });
      expect(resolve.asked).toEqual(["hop1.test", "hop2.test", "hop3.test", "hop3.test"]);
      expect(server.hits.map((hit) => hit.path)).toEqual(["/r1", "/r2", "/r3", "/photo.png"]);
      expect(ctx.lines.filter((line) => line.message.startsWith("redirected to"))).toHaveLength(3);
    });

    it("refuses a fourth redirect without requesting it", async () => {
      for (const n of [1, 2, 3, 4]) server.route(`/loop${n}`, redirect(`/loop${n + 1}`));
      const error = await rejection(compress(local, `${server.url}/loop1`).run);
      expect(error).toEqual(new PermanentJobError(`127.0.0.1:${server.port} redirected again after 3 redirects; giving up`));
      expect(server.hits.map((hit) => hit.path)).toEqual(["/loop1", "/loop2", "/loop3", "/loop4"]);
    });

    it.each([
      ["credentials", (port: number) => `http://user:pw@hop.test:${port}/photo.png`, /must not contain credentials/],
      ["gopher:", (port: number) => `gopher://hop.test:${port}/_x`, /must use https or http, not gopher/],
      ["file:", () => "file:///etc/passwd", /must use https or http, not file/],
    ])("re-checks the URL policy on a redirect hop (%s)", async (_label, target, reason) => {
      server.route("/bad-redirect", redirect(target(server.port)));
      const error = await rejection(compress(local, `${server.url}/bad-redirect`).run);
      expect(error).toBeInstanceOf(PermanentJobError);
      expect(error!.message).toMatch(new RegExp(`^redirect from 127\\.0\\.0\\.1:${server.port} refused: URL refused: it`));
      expect(error!.message).toMatch(reason);
      expect(server.hits.map((hit) => hit.path)).toEqual(["/bad-redirect"]);
    });

    it("fails permanently on a redirect without a Location", async () => {
      server.route("/nowhere", (_req, res) => res.writeHead(302).end());
      await expect(compress(local, `${server.url}/nowhere`).run).rejects.toThrow(
        new PermanentJobError(`127.0.0.1:${server.port} answered 302 without a Location header`),
      );
    });
  });

  describe("https", () => {
    let certificate: TestCertificate;
    let secure: RouteServer;
    beforeAll(async () => {
      certificate = selfSignedCertificate("images.test");
      secure = await startImageServer({ tls: certificate });
      secure.route("/photo.png", serve(png, "image/png"));
      secure.route("/to-http", redirect(`http://images.test:${server.port}/photo.png`));
    });
    afterEach(() => {
      secure.hits.length = 0;
    });
    afterAll(() => secure.close());

    it("connects to the checked address while SNI, certificate check and Host stay the original host name", async () => {
      const net = { resolve: loopbackResolver(), ca: certificate.cert };
      const { run } = compress({ ALLOW_PRIVATE_NETWORK: "true" }, `https://images.test:${secure.port}/photo.png`, { net });
      expect(await run).toMatchObject({ width: 200, original_width: 400 });
      expect(secure.hits).toEqual([{ path: "/photo.png", host: `images.test:${secure.port}`, servername: "images.test" }]);
    });

    it("fails when the certificate does not name the host (no bypass through the pinned address)", async () => {
      const net = { resolve: loopbackResolver(), ca: certificate.cert };
      const error = await rejection(compress({ ALLOW_PRIVATE_NETWORK: "true" }, `https://elsewhere.test:${secure.port}/photo.png`, { net }).run);
      expect(error).toBeInstanceOf(RetryableJobError);
      expect(error!.message).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
      expect(secure.hits).toEqual([]);
    });

    it("never follows a redirect from https down to http", async () => {
      const net = { resolve: loopbackResolver(), ca: certificate.cert };
      const error = await rejection(compress(local, `https://images.test:${secure.port}/to-http`, { net }).run);
      expect(error).toEqual(new PermanentJobError(`images.test:${secure.port} redirected from https to http; refused`));
      expect(server.hits).toEqual([]);
    });
  });

  describe("size, time and pixel caps", () => {
    const capped: Env = { ...local, IMAGE_MAX_BYTES: "65536" };

    it("refuses at once a Content-Length over IMAGE_MAX_BYTES", async () => {
      server.route("/declared", endless({ headers: { "content-length": String(10 * 1024 * 1024) } }));
      await expect(compress(capped, `${server.url}/declared`).run).rejects.toThrow(
        new PermanentJobError(`the image at 127.0.0.1:${server.port} declares a Content-Length over IMAGE_MAX_BYTES (65536 bytes); not downloaded`),
      );
    });

    it("stops a chunked body without Content-Length once it passes IMAGE_MAX_BYTES", async () => {
      server.route("/chunked", endless({ chunkBytes: 4096 }));
      await expect(compress(capped, `${server.url}/chunked`).run).rejects.toThrow(
        new PermanentJobError(`the image at 127.0.0.1:${server.port} is larger than IMAGE_MAX_BYTES (65536 bytes); download stopped`),
      );
    });

    it("never reads past a Content-Length that understates an endless body", async () => {
      // Declares 1 KiB, then streams forever: Node's parser takes the declared bytes and rejects the rest.
      server.route("/understated", endless({ chunkBytes: 4096, headers: { "content-length": "1024" } }));
      await expect(compress(capped, `${server.url}/understated`).run).rejects.toThrow(/could not be reached \(HPE_/);
    });

    it("gives up after PROVIDER_TIMEOUT_MS when the server does not answer, or drips the body", async () => {
      server.route("/hang", hang);
      server.route("/drip", endless({ chunkBytes: 16, intervalMs: 50 }));
      const env = { ...local, PROVIDER_TIMEOUT_MS: "300" };
      await expect(compress(env, `${server.url}/hang`).run).rejects.toThrow(new RetryableJobError(`127.0.0.1:${server.port} did not answer within 300 ms`));
      await expect(compress(env, `${server.url}/drip`).run).rejects.toThrow(new RetryableJobError(`127.0.0.1:${server.port} did not answer within 300 ms`));
    });

    it.each([
      ["PNG", () => withPngSize(png, 100_000, 100_000), "100000×100000 = 10000000000"],
      ["JPEG", () => withJpegSize(jpeg, 60_000, 60_000), "60000×60000 = 3600000000"],
      [
        "GIF",
        async () => withGifSize(await new Jimp({ width: 8, height: 8, color: 0xffffffff }).getBuffer("image/gif"), 65_535, 65_535),
        "65535×65535 = 4294836225",
      ],
      [
        "BMP",
        async () => withBmpSize(await new Jimp({ width: 8, height: 8, color: 0xffffffff }).getBuffer("image/bmp"), 50_000, -50_000),
        "50000×50000 = 2500000000",
      ],
    ])("refuses a small %s that declares a huge image, before decoding it", async (_format, make, declared) => {
      const bomb = await make();
      expect(bomb.length).toBeLessThan(200_000);
      server.route("/bomb", serve(bomb));
      await expect(compress(local, `${server.url}/bomb`).run).rejects.toThrow(
        new PermanentJobError(`the image declares ${declared} pixels, over IMAGE_MAX_PIXELS (50000000); not decoded`),
      );
    });

    it("applies IMAGE_MAX_PIXELS as configured (at the cap passes, one pixel over fails)", async () => {
      await expect(compress({ ...local, IMAGE_MAX_PIXELS: "120000" }, `${server.url}/photo.png`).run).resolves.toMatchObject({ original_width: 400 });
      await expect(compress({ ...local, IMAGE_MAX_PIXELS: "119999" }, `${server.url}/photo.png`).run).rejects.toThrow(
        /declares 400×300 = 120000 pixels, over IMAGE_MAX_PIXELS \(119999\)/,
      );
    });
  });

  describe("bad images and statuses", () => {
    it.each([
      ["text", Buffer.from("<html>not an image</html>"), "the download is not a supported image (PNG, JPEG, GIF, BMP)"],
      [
        "WebP",
        Buffer.concat([Buffer.from("RIFF\x10\x00\x00\x00WEBPVP8 ", "latin1"), Buffer.alloc(32)]),
        "the download is not a supported image (PNG, JPEG, GIF, BMP)",
      ],
      ["TIFF", Buffer.from("4d4d002a00000008", "hex"), "the download is not a supported image (PNG, JPEG, GIF, BMP)"],
      ["a truncated PNG header", Buffer.from("89504e470d0a1a0a0000000d4948", "hex"), "the PNG header is truncated or corrupt"],
      ["an empty image", () => withPngSize(png, 0, 300), "the PNG header declares an empty 0×300 image"],
    ])("fails permanently on %s", async (_label, body, message) => {
      server.route("/bad", serve(typeof body === "function" ? body() : body));
      await expect(compress(local, `${server.url}/bad`).run).rejects.toThrow(new PermanentJobError(message));
    });

    it("fails permanently on a corrupt body behind a valid header", async () => {
      const corrupt = Buffer.concat([png.subarray(0, 33), Buffer.alloc(200, 0x5a)]);
      server.route("/corrupt", serve(corrupt));
      await expect(compress(local, `${server.url}/corrupt`).run).rejects.toThrow(/^the image could not be decoded \(/);
    });

    it.each([400, 401, 403, 404, 410])("fails permanently on %i", async (status) => {
      server.route("/status", (_req, res) => res.writeHead(status).end("no"));
      const error = await rejection(compress(local, `${server.url}/status`).run);
      expect(error).toEqual(new PermanentJobError(`127.0.0.1:${server.port} answered ${status}: no`));
    });

    it.each([408, 429, 500, 502, 503, 504])("retries on %i, honouring Retry-After", async (status) => {
      server.route("/status", (_req, res) => res.writeHead(status, { "retry-after": "3" }).end());
      const error = await rejection(compress(local, `${server.url}/status`).run);
      expect(error).toBeInstanceOf(RetryableJobError);
      expect((error as RetryableJobError).retryAfterMs).toBe(3000);
    });

    it("retries when the server cannot be reached", async () => {
      const gone = await startImageServer();
      await gone.close();
      await expect(compress(local, `${gone.url}/photo.png`).run).rejects.toThrow(/could not be reached \(ECONNREFUSED/);
    });

    it("refuses an http URL unless WEBHOOK_ALLOW_HTTP is set (the same URL policy as the API)", async () => {
      await expect(compress({ ALLOW_PRIVATE_NETWORK: "true" }, `${server.url}/photo.png`).run).rejects.toThrow(
        new PermanentJobError("URL refused: it must use https, not http"),
      );
      expect(server.hits).toEqual([]);
    });
  });
});

/** Inserts an Exif APP1 segment (big-endian TIFF, IFD0 with one Orientation entry) right after SOI. */
function withExifOrientation(jpeg: Buffer, orientation: number): Buffer {
  const tiff = Buffer.alloc(26);
  tiff.write("MM", 0, "latin1");
  tiff.writeUInt16BE(42, 2);
  tiff.writeUInt32BE(8, 4); // IFD0 offset
  tiff.writeUInt16BE(1, 8); // one entry
  tiff.writeUInt16BE(0x0112, 10); // Orientation
  tiff.writeUInt16BE(3, 12); // SHORT
  tiff.writeUInt32BE(1, 14); // count
  tiff.writeUInt16BE(orientation, 18);
  tiff.writeUInt32BE(0, 22); // no next IFD
  const payload = Buffer.concat([Buffer.from("Exif\0\0", "latin1"), tiff]);
  const header = Buffer.from([0xff, 0xe1, 0, 0]);
  header.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), header, payload, jpeg.subarray(2)]);
}

function withPngSize(data: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(data);
  copy.writeUInt32BE(width, 16);
  copy.writeUInt32BE(height, 20);
  return copy;
}

function withGifSize(data: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(data);
  copy.writeUInt16LE(width, 6);
  copy.writeUInt16LE(height, 8);
  return copy;
}

function withBmpSize(data: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(data);
  copy.writeInt32LE(width, 18);
  copy.writeInt32LE(height, 22);
  return copy;
}

function withJpegSize(data: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(data);
  for (let offset = 2; offset < copy.length;) {
    const marker = copy[offset + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) {
      copy.writeUInt16BE(height, offset + 5);
      copy.writeUInt16BE(width, offset + 7);
      return copy;
    }
    offset += 2 + copy.readUInt16BE(offset + 2);
  }
  throw new Error("no SOF marker in the fixture");
}
