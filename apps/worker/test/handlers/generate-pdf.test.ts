// generate_pdf with the real Chromium: the PDFs are read back with poppler (pdftotext, pdfinfo, pdftoppm), and
// page images are kept under test-artifacts/pdf/ so a person can look at them.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { defaultFormats } from "jimp";
import { templateNames } from "@conveyor/config";
import { PermanentJobError, RetryableJobError, type GeneratePdfPayload } from "@conveyor/contracts";
import { createLogger } from "@conveyor/logger";
import { waitFor } from "@conveyor/testkit";
import { loadWorkerConfig } from "../../src/env";
import { generatePdfHandler } from "../../src/handlers/generate-pdf";
import { BrowserPool } from "../../src/handlers/pdf/browser-pool";
import type { HandlerDeps } from "../../src/handlers/types";
import { handlerDeps } from "../fakes/handler-deps";
import { handlerContext, type RecordedContext } from "../support/handler-context";

const run = promisify(execFile);
const ARTIFACTS = path.resolve(__dirname, "../../../../test-artifacts/pdf");
// A fixed clock, far from any real run's date: a document printing today instead of its data's date shows.
const NOW = new Date("2031-05-02T09:30:00Z");
const TODAY = "2 May 2031";
const now = () => NOW;

function deps(env: Record<string, string> = {}): HandlerDeps {
  const config = loadWorkerConfig({ NODE_ENV: "test", ...env });
  return { settings: config, logger: quietLogger() };
}

const quietLogger = () => createLogger({ service: "worker", level: "error", json: true });

/** Logs on save, as the worker runtime's saveArtifact does, so a test sees where the save falls among the lines. */
function loggingSaves(ctx: RecordedContext): RecordedContext {
  const save = ctx.saveArtifact;
  ctx.saveArtifact = async (artifact) => {
    await save(artifact);
    ctx.log("info", `Stored artifact ${artifact.filename}`);
  };
  return ctx;
}

/** Writes the PDF and its page images (60 dpi) under test-artifacts/pdf; returns the paths. */
async function keep(name: string, pdf: Buffer): Promise<{ pdf: string; pngs: string[] }> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.pdf`);
  await writeFile(file, pdf);
  const prefix = path.join(ARTIFACTS, name);
  await run("pdftoppm", ["-png", "-r", "60", file, prefix]);
  const pages = await pageCount(file);
  const digits = String(pages).length;
  return { pdf: file, pngs: Array.from({ length: pages }, (_, i) => `${prefix}-${String(i + 1).padStart(digits, "0")}.png`) };
}

async function pageCount(file: string): Promise<number> {
  const { stdout } = await run("pdfinfo", [file]);
  return Number(/^Pages:\s+(\d+)/m.exec(stdout)![1]);
}

/** Text of the PDF in reading order, whitespace collapsed. */
async function textOf(file: string, options: string[] = []): Promise<string> {
  const { stdout } = await run("pdftotext", [...options, file, "-"]);
  return stdout.replace(/\s+/g, " ");
}

/** Share of pixels that are not (near) white. */
async function inkRatio(png: string): Promise<number> {
  // jimp's PNG decoder itself: Jimp.read sniffs the format with an ES module jest cannot load.
  const decoder = defaultFormats.map((format) => format()).find((format) => format.mime === "image/png")!;
  const { data, width, height } = decoder.decode!(await readFile(png));
  let ink = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i]! < 235 || data[i + 1]! < 235 || data[i + 2]! < 235) ink++;
  return ink / (width * height);
}

async function chromiumChildren(): Promise<number[]> {
  const { stdout } = await run("pgrep", ["-P", String(process.pid)]).catch(() => ({ stdout: "" }));
  const pids = stdout.split("\n").filter(Boolean).map(Number);
  const named = await Promise.all(
    pids.map(async (pid) => {
      const { stdout: comm } = await run("ps", ["-o", "comm=", "-p", String(pid)]).catch(() => ({ stdout: "" }));
      return /chrom/i.test(comm) ? pid : null;
    }),
  );
  return named.filter((pid): pid is number => pid !== null);
}

const INVOICE: GeneratePdfPayload = {
  template: "invoice",
  data: {
    number: "INV-2026-0042",
    customer: { name: "Wanjiku Holdings Ltd", email: "accounts@wanjiku.example", address: "Kimathi Street 12\nNairobi, Kenya" },
    items: [
      { description: "Architecture review (senior consultant)", quantity: 12, unit_price: 150 },
      { description: "Cloud hosting, November", quantity: 1, unit_price: 249.99 },
      { description: "Support hours", quantity: 2.5, unit_price: 80.1 },
    ],
    currency: "USD",
    date: "2026-11-21",
    notes: "Payment due within 30 days.\nBank transfer to account 0123456789.",
  },
};

describe("generate_pdf", () => {
  let handler: ReturnType<typeof generatePdfHandler>;
  let templatesDir: string;
  let canary: Server;
  let canaryUrl: string;
  const canaryHits: string[] = [];
  let canaryConnections = 0;

  beforeAll(async () => {
    templatesDir = await mkdtemp(path.join(tmpdir(), "conveyor-templates-"));
    // A local server that must never hear from the PDF page.
    canary = createServer((req, res) => {
      canaryHits.push(req.url ?? "");
      res.end("x");
    });
    canary.on("connection", () => canaryConnections++);
    await new Promise<void>((resolve) => canary.listen(0, "127.0.0.1", resolve));
    canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
    const u = canaryUrl;
    await writeFile(
      path.join(templatesDir, "leaky.hbs"),
      `<!doctype html><html><head>
        <meta http-equiv="refresh" content="0;url=${u}/refresh">
        <link rel="stylesheet" href="${u}/stylesheet"><link rel="preconnect" href="${u}"><link rel="dns-prefetch" href="${u}">
        <link rel="prefetch" href="${u}/prefetch"><link rel="preload" as="image" href="${u}/preload">
        <style>@import url("${u}/import"); body { background: url("${u}/background"); } @font-face { font-family: x; src: url("${u}/font"); }</style>
        <script src="${u}/script"></script>
      </head><body>
        <p>{{heading}}</p>
        <img src="${u}/image"><img src="http://localhost:${u.split(":").pop()}/by-name"><img src="file:///etc/hostname">
        <iframe src="${u}/iframe"></iframe><object data="${u}/object"></object><embed src="${u}/embed">
        <video poster="${u}/poster"></video><audio src="${u}/audio"></audio><svg><image href="${u}/svg-image"/></svg>
        {{{raw_html}}}
        <script>document.body.innerHTML = "SCRIPT RAN"; new Image().src = "${u}/from-script";</script>
      </body></html>`,
    );
    await writeFile(
      path.join(templatesDir, "certificate.hbs"),
      `<!doctype html><html><head><meta charset="utf-8">{{> styles}}</head><body>
        <h1 class="doc-title">Certificate of completion</h1><p>Awarded to {{name}} for {{course}}, fee {{money fee "EUR"}}.</p></body></html>`,
    );
    // Data fields named like the helpers (date, money, multiply), beside calls of those helpers with parameters.
    await writeFile(
      path.join(templatesDir, "award.hbs"),
      `<!doctype html><html><head><meta charset="utf-8"></head><body>
        <p>Issued {{date}} | prize {{money}} | copies {{multiply}}</p>
        <p>Fee {{money fee "EUR"}} | due {{date due}} | total {{multiply copies fee}}</p>
        {{#each entries}}<p>{{name}} on {{date}}</p>{{/each}}</body></html>`,
    );
    await writeFile(path.join(templatesDir, "broken.hbs"), "<p>{{#each items}}{{name}}</p>");
    await writeFile(path.join(templatesDir, "README.txt"), "not a template");
    handler = generatePdfHandler(deps({ TEMPLATES_DIR: templatesDir }), { now });
  });

  afterAll(async () => {
    await handler.close();
    await new Promise((resolve) => canary.close(resolve));
    await rm(templatesDir, { recursive: true, force: true });
  });

  it("renders a professional invoice: number, customer, line items, the computed total and the data's date", async () => {
    const ctx = loggingSaves(handlerContext({ type: "generate_pdf" }));
    const result = await handler.handle(INVOICE, ctx);

    expect(ctx.artifact).toMatchObject({ contentType: "application/pdf", filename: "invoice-INV-2026-0042.pdf" });
    const pdf = ctx.artifact!.data;
    expect(Buffer.isBuffer(pdf)).toBe(true);
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    expect(result).toEqual({ template: "invoice", pages: 1, bytes: pdf.length });

    const files = await keep("invoice", pdf);
    expect(await pageCount(files.pdf)).toBe(1);
    const text = await textOf(files.pdf);
    for (const expected of ["INVOICE", "INV-2026-0042", "21 November 2026", "Wanjiku Holdings Ltd", "accounts@wanjiku.example", "Nairobi, Kenya"]) {
      expect(text).toContain(expected);
    }
    for (const expected of ["Architecture review (senior consultant)", "Cloud hosting, November", "Support hours", "$1,800.00", "$249.99", "$200.25"]) {
      expect(text).toContain(expected);
    }
    // 12 × 150 + 1 × 249.99 + 2.5 × 80.10 = 2,250.24
    expect(text).toMatch(/Total due \$2,250\.24/);
    expect(text).toContain("Payment due within 30 days.");
    expect(text).toContain("Page 1 of 1");
    // data.date, not the render date: the `date` helper must not shadow the field.
    expect(text).not.toContain(TODAY);
    const ink = await inkRatio(files.pngs[0]!);
    expect(ink).toBeGreaterThan(0.01);
    expect(ink).toBeLessThan(0.5);
    // What happened, in order: rendered, then stored.
    expect(ctx.lines).toEqual([
      { level: "info", message: 'Rendered template "invoice" to PDF: 1 page, ' + pdf.length + " bytes" },
      { level: "info", message: "Stored artifact invoice-INV-2026-0042.pdf" },
    ]);
    // Progress through the render, ending at 1 once the file is stored (docs/reference/events.md#progress-and-live-results).
    expect(ctx.progressReports).toEqual([
      { fraction: 0.1, message: "Template rendered" },
      { fraction: 0.4, message: "Page loaded" },
      { fraction: 0.8, message: "Printed to PDF" },
      { fraction: 1, message: "Stored" },
    ]);
  });

  it("renders a receipt in the document's currency with the customer given as a plain name", async () => {
    const ctx = handlerContext();
    const result = await handler.handle(
      {
        template: "receipt",
        data: { number: "R/7781", customer: "Otieno Auto Spares", currency: "KES", items: [{ description: "Brake pads", quantity: 3, unit_price: 500 }] },
      },
      ctx,
    );
    expect(ctx.artifact!.filename).toBe("receipt-R-7781.pdf");
    const files = await keep("receipt", ctx.artifact!.data);
    const text = await textOf(files.pdf);
    expect(text).toContain("RECEIPT");
    expect(text).toContain("PAID");
    expect(text).toContain("Otieno Auto Spares");
    expect(text).toContain(`DATE PAID ${TODAY}`); // no date in the data: the clock's
    expect(text).toMatch(/Total paid KES 1,500\.00/);
    expect(result).toMatchObject({ template: "receipt", pages: 1 });
    expect(await inkRatio(files.pngs[0]!)).toBeGreaterThan(0.01);
  });

  it("renders a report with a title header, contents and numbered sections over several pages", async () => {
    const paragraph =
      "Throughput held steady across the quarter while the error budget was barely touched. The worker fleet scaled from four to twelve replicas during the end-of-month peak and back without operator action.";
    const sections = Array.from({ length: 12 }, (_, i) => ({
      heading: `Finding ${i + 1}: ${["Throughput", "Latency", "Reliability", "Cost"][i % 4]}`,
      body: `${paragraph}\n\n${paragraph} ${paragraph}\n\n${paragraph}`,
    }));
    const ctx = handlerContext();
    const result = (await handler.handle({ template: "report", data: { title: "Quarterly operations review", sections } }, ctx)) as { pages: number };
    const files = await keep("report", ctx.artifact!.data);
    expect(result.pages).toBeGreaterThan(1);
    expect(await pageCount(files.pdf)).toBe(result.pages);
    expect(ctx.artifact!.filename).toBe("report.pdf");
    const text = await textOf(files.pdf);
    expect(text).toContain("Quarterly operations review");
    expect(text).toContain(`DATE SECTIONS ${TODAY} 12`); // a report is dated by the clock
    expect(text).toContain("CONTENTS");
    expect(text).toContain("12. Finding 12: Cost");
    expect(text).toContain(`Page ${result.pages} of ${result.pages}`);
    for (const png of files.pngs) expect(await inkRatio(png)).toBeGreaterThan(0.005);
  });

  it("spreads a long invoice over pages, repeating the table header, with the exact total", async () => {
    const items = Array.from({ length: 90 }, (_, i) => ({ description: `Part ${String(i + 1).padStart(3, "0")}`, quantity: (i % 5) + 1, unit_price: 19.99 }));
    const totalCents = items.reduce((sum, item) => sum + Math.round(item.quantity * 1999), 0);
    const ctx = handlerContext();
    const result = (await handler.handle({ template: "invoice", data: { number: "INV-LONG", customer: "Bulk Buyer", items } }, ctx)) as { pages: number };
    const files = await keep("invoice-long", ctx.artifact!.data);
    expect(result.pages).toBeGreaterThan(1);
    const secondPage = await textOf(files.pdf, ["-f", "2", "-l", "2"]);
    expect(secondPage).toMatch(/# DESCRIPTION QTY UNIT PRICE AMOUNT \d+ Part/);
    const lastPage = await textOf(files.pdf, ["-f", String(result.pages), "-l", String(result.pages)]);
    const total = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(totalCents / 100);
    expect(lastPage).toContain(`Total due ${total}`);
  });

  it("escapes every value: markup in the data is printed as text", async () => {
    const ctx = handlerContext();
    await handler.handle(
      {
        template: "invoice",
        data: {
          number: "INV-<1>",
          customer: { name: '<b>Bold</b> & "Sons"', address: "<script>alert(1)</script>" },
          items: [{ description: `<img src="${canaryUrl}/from-data">`, quantity: 1, unit_price: 1 }],
        },
      },
      ctx,
    );
    const files = await keep("invoice-escaped", ctx.artifact!.data);
    const text = await textOf(files.pdf);
    expect(text).toContain('<b>Bold</b> & "Sons"');
    expect(text).toContain("<script>alert(1)</script>");
    expect(text).toContain(`<img src="${canaryUrl}/from-data">`);
    expect(ctx.artifact!.filename).toBe("invoice-INV-1.pdf");
  });

  it("never lets the page reach the network, and never runs its scripts", async () => {
    const before = { hits: canaryHits.length, connections: canaryConnections };
    const ctx = handlerContext();
    await handler.handle(
      {
        template: "leaky",
        data: { heading: "Static content", raw_html: `<img src="${canaryUrl}/raw"><link rel="prefetch" href="${canaryUrl}/raw-prefetch">` },
      },
      ctx,
    );
    const files = await keep("leaky", ctx.artifact!.data);
    const text = await textOf(files.pdf);
    expect(text).toContain("Static content");
    expect(text).not.toContain("SCRIPT RAN");
    // The render is over and its browser context closed. Whatever the page sent would be queued on the canary's
    // socket ahead of a request of ours made now (connections are accepted in order): once ours is answered,
    // the canary has heard all it ever will from the page.
    expect((await fetch(`${canaryUrl}/after-render`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    expect(canaryHits.slice(before.hits)).toEqual(["/after-render"]);
    expect(canaryConnections - before.connections).toBe(1);
  });

  it("renders a template from TEMPLATES_DIR, with the built-in partials and helpers", async () => {
    expect(templateNames(templatesDir)).toEqual(["invoice", "receipt", "report", "award", "broken", "certificate", "leaky"]);
    expect(templateNames(undefined)).toEqual(["invoice", "receipt", "report"]);
    expect(() => templateNames(path.join(templatesDir, "missing"))).toThrow(/^TEMPLATES_DIR: cannot read /);
    const ctx = handlerContext();
    const result = await handler.handle({ template: "certificate", data: { name: "Amina Njeri", course: "Job queues 101", fee: 49.5 } }, ctx);
    const files = await keep("certificate", ctx.artifact!.data);
    expect(await textOf(files.pdf)).toContain("Awarded to Amina Njeri for Job queues 101, fee €49.50.");
    expect(result).toMatchObject({ template: "certificate", pages: 1 });
    expect(ctx.artifact!.filename).toBe("certificate.pdf");
    expect(ctx.lines[0]!.message).toContain("from TEMPLATES_DIR");
  });

  it("prints a TEMPLATES_DIR template's data fields named date, money and multiply; the helpers run when given parameters", async () => {
    const ctx = handlerContext();
    await handler.handle(
      {
        template: "award",
        data: {
          date: "the first Monday of term",
          money: "<b>a book token</b>",
          multiply: "three",
          fee: 49.5,
          due: "2026-03-14",
          copies: 2,
          entries: [{ name: "Amina", date: "<i>spring</i>" }, { name: "Baraka" }],
        },
      },
      ctx,
    );
    const text = await textOf((await keep("award", ctx.artifact!.data)).pdf);
    // The data's values, escaped like any value (the markup is printed as text).
    expect(text).toContain("Issued the first Monday of term | prize <b>a book token</b> | copies three");
    expect(text).toContain("Fee €49.50 | due 14 March 2026 | total 99");
    // Each item is the context inside #each: its own date wins; without one, the helper gives the clock's date.
    expect(text).toContain(`Amina on <i>spring</i> Baraka on ${TODAY}`);
  });

  it("lets TEMPLATES_DIR restyle a built-in template, keeping its computed totals and the data's date", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "conveyor-override-"));
    const restyled = generatePdfHandler(deps({ TEMPLATES_DIR: dir }), { now });
    try {
      await writeFile(path.join(dir, "invoice.hbs"), "<p>ACME invoice {{number}} for {{customer.name}}: {{total}}, dated {{date}}</p>");
      const ctx = handlerContext();
      await restyled.handle(INVOICE, ctx);
      expect(await textOf((await keep("invoice-restyled", ctx.artifact!.data)).pdf)).toContain(
        "ACME invoice INV-2026-0042 for Wanjiku Holdings Ltd: $2,250.24, dated 21 November 2026",
      );
    } finally {
      await restyled.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fails permanently for a template that does not compile, or one that does not exist", async () => {
    const broken = await handler.handle({ template: "broken", data: {} }, handlerContext()).catch((error: Error) => error);
    expect(broken).toBeInstanceOf(PermanentJobError);
    expect((broken as Error).message).toMatch(/Template "broken" does not compile/);
    const unknown = await handler.handle({ template: "nope", data: {} }, handlerContext()).catch((error: Error) => error);
    expect(unknown).toBeInstanceOf(PermanentJobError);
    expect((unknown as Error).message).toMatch(/No template called "nope"/);
    const traversal = await handler.handle({ template: "../etc/passwd", data: {} }, handlerContext()).catch((error: Error) => error);
    expect(traversal).toBeInstanceOf(PermanentJobError);
  });

  it("stops when the job is aborted, saves nothing, and keeps serving later jobs", async () => {
    const ctx = handlerContext();
    const pending = handler.handle(INVOICE, ctx);
    ctx.abort("worker shutting down");
    await expect(pending).rejects.toThrow("worker shutting down");
    expect(ctx.artifact).toBeUndefined();
    const next = handlerContext();
    await handler.handle(INVOICE, next);
    expect(next.artifact).toBeDefined();
  });

  it("launches Chromium again after it crashed", async () => {
    await handler.handle(INVOICE, handlerContext());
    const pids = await chromiumChildren();
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, "SIGKILL");
    // The disconnect may be noticed by this job (a retryable failure) or before it; the next one always works.
    const first = await handler.handle(INVOICE, handlerContext()).then(
      () => null,
      (error: Error) => error,
    );
    if (first) {
      expect(first).toBeInstanceOf(RetryableJobError);
      expect(first).not.toBeInstanceOf(PermanentJobError);
    }
    const ctx = handlerContext();
    await handler.handle(INVOICE, ctx);
    expect(ctx.artifact!.data.subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("fails permanently naming PUPPETEER_EXECUTABLE_PATH, not the server's path, when Chromium is not there", async () => {
    const operator = handlerDeps({ PUPPETEER_EXECUTABLE_PATH: "/usr/bin/chromium-not-installed" });
    const missing = generatePdfHandler(operator, { now });
    try {
      const ctx = handlerContext();
      const failure = await missing.handle(INVOICE, ctx).catch((error: Error) => error);
      expect(failure).toBeInstanceOf(PermanentJobError);
      expect((failure as Error).message).toBe("Chromium could not be started; check the worker's PUPPETEER_EXECUTABLE_PATH setting");
      expect(ctx.lines.map((line) => line.message).join("\n")).not.toContain("/usr/bin/chromium");
      // The operator's log has the path.
      expect(operator.processOutput.join("")).toContain("/usr/bin/chromium-not-installed");
    } finally {
      await missing.close();
    }
  });
});

describe("the PDF browser pool", () => {
  it("rejects with the abort reason when the job is aborted mid-render, and closes the page", async () => {
    const pool = new BrowserPool({ executablePath: loadWorkerConfig({}).PUPPETEER_EXECUTABLE_PATH, logger: quietLogger() });
    try {
      const controller = new AbortController();
      let page: import("puppeteer-core").Page | undefined;
      const rendering = pool.withPage(controller.signal, async (p) => {
        page = p;
        await p.setContent("<p>hello</p>");
        controller.abort(new Error("shutting down"));
        return p.pdf({ format: "A4" });
      });
      await expect(rendering).rejects.toThrow("shutting down");
      expect(page!.isClosed()).toBe(true);
      // The slot was given back.
      expect(await pool.withPage(new AbortController().signal, async (p) => p.evaluate(() => 1 + 1))).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it("caps the pages open at once, and close() leaves no Chromium running", async () => {
    const pool = new BrowserPool({ executablePath: loadWorkerConfig({}).PUPPETEER_EXECUTABLE_PATH, maxPages: 2, logger: quietLogger() });
    const signal = new AbortController().signal;
    let running = 0;
    let peak = 0;
    const gates: (() => void)[] = [];
    const jobs = [1, 2, 3, 4].map(() =>
      pool.withPage(signal, async (page) => {
        running++;
        peak = Math.max(peak, running);
        await page.setContent("<p>hello</p>");
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
      }),
    );
    const deadline = Date.now() + 20_000;
    while (gates.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(running).toBe(2);
    // Release one page at a time: each release lets exactly one waiting job in.
    for (let released = 0; released < 4 && Date.now() < deadline;) {
      if (gates.length > released) {
        expect(running).toBeLessThanOrEqual(2);
        gates[released++]!();
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(jobs);
    expect(peak).toBe(2);
    await pool.close();
    await waitFor(async () => (await chromiumChildren()).length === 0, "every Chromium process to exit after close()", 10_000);
  });
});
