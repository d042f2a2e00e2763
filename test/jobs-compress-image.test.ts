// compress_image end to end: POST /jobs on the real API, a real worker process downloading from a local image
// server, and the JPEG served back by GET /jobs/{id}/artifact. Loopback, so ALLOW_PRIVATE_NETWORK=true.
import { defaultFormats, Jimp } from "jimp";
import { serve, startImageServer, type RouteServer } from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const local = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };
const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";
// jimp's own JPEG decoder: the artifact must decode as a JPEG, whatever the worker uses internally.
const jpeg = defaultFormats.map((format) => format()).find((format) => format.mime === "image/jpeg")!;

let stack: Stack;
let images: RouteServer;
beforeAll(async () => {
  images = await startImageServer();
  stack = await startStack({ apiEnv: local, workerEnv: { ...local, WORKER_TYPES: "compress_image" } });
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await images?.close();
});

describe("compress_image through the API and a worker", () => {
  it("stores a resized JPEG that GET /jobs/{id}/artifact serves", async () => {
    const png = await new Jimp({ width: 300, height: 200, color: 0x336699ff }).getBuffer("image/png");
    images.route("/banner.png", serve(png, "image/png"));

    const created = await stack.post("/jobs", { type: "compress_image", payload: { url: `${images.url}/banner.png`, width: 150, quality: 70 } });
    expect(created.status).toBe(202);
    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({
      status: "done",
      result: {
        width: 150,
        height: 100,
        original_width: 300,
        original_height: 200,
        original_bytes: png.length,
        bytes: expect.any(Number),
        content_type: "image/jpeg",
      },
    });

    const artifact = await stack.api.request
      .get(`/jobs/${job.id}/artifact`)
      .set("X-API-Key", stack.apiKey)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => done(null, Buffer.concat(chunks)));
      });
    expect(artifact.status).toBe(200);
    expect(artifact.headers["content-type"]).toMatch(/^image\/jpeg/);
    const body = artifact.body as Buffer;
    expect(body.length).toBe((job.result as { bytes: number }).bytes);
    const decoded = jpeg.decode!(body);
    expect([decoded.width, decoded.height]).toEqual([150, 100]);
  });
});
