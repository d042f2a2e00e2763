// generate_pdf end to end: POST /jobs → a real worker process renders with Chromium → GET /jobs/{id}/artifact.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { waitFor } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const run = promisify(execFile);
let stack: Stack;
let templatesDir: string;

beforeAll(async () => {
  templatesDir = await mkdtemp(path.join(tmpdir(), "conveyor-e2e-templates-"));
  await writeFile(path.join(templatesDir, "badge.hbs"), "<!doctype html><html><body><h1>Visitor badge</h1><p>{{name}}</p></body></html>");
  stack = await startStack({ apiEnv: { TEMPLATES_DIR: templatesDir }, workerEnv: { TEMPLATES_DIR: templatesDir } });
  await stack.startWorker({ WORKER_TYPES: "generate_pdf" });
});
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  await stack.close();
  await rm(templatesDir, { recursive: true, force: true });
});

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

async function artifact(id: string) {
  return stack.api.request
    .get(`/jobs/${id}/artifact`)
    .set("X-API-Key", stack.apiKey)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(null, Buffer.concat(chunks)));
    });
}

async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "conveyor-e2e-pdf-"));
  try {
    await writeFile(path.join(dir, "out.pdf"), pdf);
    const { stdout } = await run("pdftotext", [path.join(dir, "out.pdf"), "-"]);
    return stdout.replace(/\s+/g, " ");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("generate_pdf end to end", () => {
  it("renders an invoice job and serves the PDF as the job's artifact", async () => {
    // An explicit date: the worker process runs on the real clock, so only the data's date is predictable.
    const created = await stack.post("/jobs", {
      type: "generate_pdf",
      payload: {
        template: "invoice",
        data: {
          number: "E2E-001",
          customer: "Kamau & Co",
          currency: "KES",
          date: "2026-03-14",
          items: [{ description: "Delivery", quantity: 2, unit_price: 750 }],
        },
      },
    });
    expect(created.status).toBe(202);
    const job = await stack.waitForJob(created.body.id, terminal, 60_000);
    expect(job.status).toBe("done");
    expect(job.result).toEqual({ template: "invoice", pages: 1, bytes: expect.any(Number) });

    const res = await artifact(job.id);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/pdf");
    expect(res.headers["content-disposition"]).toBe('attachment; filename="invoice-E2E-001.pdf"');
    const pdf = res.body as Buffer;
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdf.length).toBe((job.result as { bytes: number }).bytes);
    const text = await pdfText(pdf);
    expect(text).toContain("Kamau & Co");
    expect(text).toContain("INVOICE DATE 14 March 2026");
    expect(text).toMatch(/Total due KES 1,500\.00/);

    // The lines follow what happened: rendered, then stored.
    expect((await stack.logs(job.id)).map((line) => line.message)).toEqual([
      expect.stringMatching(/^Attempt 1 of \d+ started\.$/),
      `Rendered template "invoice" to PDF: 1 page, ${pdf.length} bytes`,
      `Stored artifact invoice-E2E-001.pdf (application/pdf, ${pdf.length} bytes).`,
      expect.stringMatching(/^Attempt 1 succeeded in \d+ ms\.$/),
    ]);
  });

  it("accepts and renders a template from TEMPLATES_DIR, and refuses an unknown template at enqueue", async () => {
    const created = await stack.post("/jobs", { type: "generate_pdf", payload: { template: "badge", data: { name: "Achieng Odhiambo" } } });
    expect(created.status).toBe(202);
    const job = await stack.waitForJob(created.body.id, terminal, 60_000);
    expect(job.status).toBe("done");
    expect(await pdfText((await artifact(job.id)).body as Buffer)).toContain("Visitor badge Achieng Odhiambo");

    const refused = await stack.post("/jobs", { type: "generate_pdf", payload: { template: "nope", data: {} } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("validation_failed");
    expect(refused.body.error.details).toEqual([expect.objectContaining({ path: "payload.template" })]);
  });

  it("leaves no Chromium behind when its worker is killed with SIGKILL", async () => {
    const worker = stack.workers[0]!;
    const { body } = await stack.post("/jobs", { type: "generate_pdf", payload: { template: "badge", data: { name: "Last job" } } });
    expect((await stack.waitForJob(body.id, terminal, 60_000)).status).toBe("done");
    const { stdout } = await run("pgrep", ["-P", String(worker.pid)]).catch(() => ({ stdout: "" }));
    const children = stdout.split("\n").filter(Boolean).map(Number);
    const browsers: number[] = [];
    for (const pid of children) {
      const { stdout: comm } = await run("ps", ["-o", "comm=", "-p", String(pid)]).catch(() => ({ stdout: "" }));
      if (/chrom/i.test(comm)) browsers.push(pid);
    }
    expect(browsers).toHaveLength(1); // one browser, shared by every job of the process
    await worker.stop("SIGKILL");
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(async () => (browsers.some(alive) ? null : true), "Chromium to exit after its worker died", 15_000, 100);
  });
});

describe("generate_pdf on a worker whose Chromium path is wrong", () => {
  // Starts like the default path, so a leak of either would show in the job.
  const WRONG_PATH = "/usr/bin/chromium-not-installed";
  let broken: Stack;
  beforeAll(async () => {
    broken = await startStack();
    await broken.startWorker({ WORKER_TYPES: "generate_pdf", PUPPETEER_EXECUTABLE_PATH: WRONG_PATH });
  });
  afterEach(() => broken.expectOtherOrgUntouched());
  afterAll(() => broken.close());

  it("fails the job naming the setting, with no host name, PID or server path in its error and logs", async () => {
    const invoice = { number: "E2E-002", customer: "Kamau & Co", date: "2026-03-14", items: [{ description: "Delivery", quantity: 1, unit_price: 750 }] };
    const { body } = await broken.post("/jobs", { type: "generate_pdf", payload: { template: "invoice", data: invoice } });
    const job = await broken.waitForJob(body.id, terminal, 60_000);
    expect(job).toMatchObject({ status: "failed", error: "Chromium could not be started; check the worker's PUPPETEER_EXECUTABLE_PATH setting" });
    const logs = (await broken.logs(job.id)).map((line) => line.message);
    expect(logs[0]).toMatch(/^Attempt 1 of \d+ started\.$/);

    const worker = broken.workers[0]!;
    const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    for (const text of [job.error!, ...logs]) {
      expect(text).not.toMatch(new RegExp(`\\b${escaped(os.hostname())}\\b`));
      expect(text).not.toMatch(new RegExp(`\\b${worker.pid}\\b`));
      expect(text).not.toContain("/usr/bin/chromium");
    }
    // The operator's log keeps the path.
    expect(worker.output()).toContain(WRONG_PATH);
  });
});
