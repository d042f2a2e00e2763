// generate_pdf: renders a Handlebars template (built-in invoice/receipt/report, or TEMPLATES_DIR's) to HTML with
// every value escaped, prints it to an A4 PDF in the process' shared Chromium, and stores it as the artifact.
// Template problems fail the job permanently; a crashed or slow browser is worth a retry.
import Handlebars from "handlebars";
import { TimeoutError } from "puppeteer-core";
import { PermanentJobError, RetryableJobError, type GeneratePdfPayload, type JobHandler } from "@conveyor/contracts";
import { BrowserPool } from "./pdf/browser-pool";
import { createTemplateStore, type TemplateStore } from "./pdf/templates";
import { billingView, reportView, type BillingData, type ReportData } from "./pdf/view-models";
import type { HandlerDeps } from "./types";

export type GeneratePdfOptions = {
  /** Pages rendering at once in this process. Default 2. */
  maxPages?: number;
  /** Longest a page may take to load or print. Default 30 s. */
  renderTimeoutMs?: number;
  /** The clock dating a document whose data has no date. Default the system clock. */
  now?: () => Date;
};

const MARGIN = { top: "16mm", right: "16mm", bottom: "20mm", left: "16mm" };

/** generate_pdf holds a browser shared by its jobs, so it also has a close(). */
export function generatePdfHandler(deps: HandlerDeps, options: GeneratePdfOptions = {}): { handle: JobHandler<GeneratePdfPayload>; close(): Promise<void> } {
  const pool = new BrowserPool({ executablePath: deps.settings.PUPPETEER_EXECUTABLE_PATH, maxPages: options.maxPages, logger: deps.logger });
  const timeoutMs = options.renderTimeoutMs ?? 30_000;
  const clock = options.now ?? (() => new Date());
  let store: Promise<TemplateStore> | undefined;
  const templates = () =>
    (store ??= createTemplateStore(deps.settings.TEMPLATES_DIR).catch((error: Error) => {
      store = undefined;
      // The reason names server paths: it goes to the operator's log, not to the job the org reads.
      deps.logger.error("could not load the built-in PDF templates", { error: error.message });
      throw new PermanentJobError("The built-in PDF templates could not be loaded; the worker's log has the reason");
    }));

  return {
    handle: async (payload, ctx) => {
      const template = await (await templates()).resolve(payload.template);
      const now = clock();
      const html = template.render(viewFor(payload.template, payload.data, now), { now });
      ctx.progress(0.1, "Template rendered");
      const data = await pool
        .withPage(ctx.signal, async (page) => {
          page.setDefaultTimeout(timeoutMs);
          await page.setContent(html, { waitUntil: "load", timeout: timeoutMs });
          ctx.progress(0.4, "Page loaded");
          const pdf = await page.pdf({
            format: "A4",
            printBackground: true,
            margin: MARGIN,
            displayHeaderFooter: true,
            headerTemplate: "<span></span>",
            footerTemplate: footer(documentLabel(payload)),
            timeout: timeoutMs,
          });
          ctx.progress(0.8, "Printed to PDF");
          // puppeteer 23+ returns a Uint8Array; Buffer-only code (base64, bytea) needs a Buffer.
          return Buffer.from(pdf);
        })
        .catch((error: unknown) => {
          throw ctx.signal.aborted ? error : renderFailure(error, timeoutMs);
        });
      const pages = countPages(data);
      ctx.log(
        "info",
        `Rendered template "${template.name}"${template.custom ? " from TEMPLATES_DIR" : ""} to PDF: ${pages} page${pages === 1 ? "" : "s"}, ${data.length} bytes`,
      );
      await ctx.saveArtifact({ contentType: "application/pdf", filename: filename(payload), data });
      ctx.progress(1, "Stored");
      return { template: payload.template, pages, bytes: data.length };
    },
    close: () => pool.close(),
  };
}

/** Built-in names get their computed view (also when TEMPLATES_DIR restyles them); other templates get `data` as is. */
function viewFor(name: string, data: Record<string, unknown>, now: Date): unknown {
  if (name === "invoice" || name === "receipt") return { ...billingView(name, data as BillingData, now), data };
  if (name === "report") return { ...reportView(data as ReportData, now), data };
  return data;
}

function documentLabel({ template, data }: GeneratePdfPayload): string {
  if (template === "report" && typeof data.title === "string") return data.title;
  const kind = template.charAt(0).toUpperCase() + template.slice(1);
  return typeof data.number === "string" || typeof data.number === "number" ? `${kind} ${data.number}` : kind;
}

/** Chromium's print footer. It is not a Handlebars template, so the label is escaped here. */
function footer(label: string): string {
  const style =
    "width:100%;margin:0 16mm;font-family:'Liberation Sans',Arial,sans-serif;font-size:7.5pt;color:#6b7280;display:flex;justify-content:space-between";
  return `<div style="${style}"><span>${Handlebars.Utils.escapeExpression(label)}</span><span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`;
}

function filename({ template, data }: GeneratePdfPayload): string {
  const number = typeof data.number === "string" || typeof data.number === "number" ? String(data.number) : "";
  const safe = number
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-.]+|-+$/g, "")
    .slice(0, 64);
  return safe ? `${template}-${safe}.pdf` : `${template}.pdf`;
}

/** Pages in a PDF as Chromium writes it (one uncompressed `/Type /Page` dictionary per page). */
export function countPages(pdf: Buffer): number {
  return pdf.toString("latin1").match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
}

function renderFailure(error: unknown, timeoutMs: number): Error {
  if (error instanceof PermanentJobError || error instanceof RetryableJobError) return error;
  const message = (error as Error)?.message?.split("\n")[0] ?? String(error);
  if (error instanceof TimeoutError) return new RetryableJobError(`Chromium did not finish the PDF within ${timeoutMs} ms`);
  // TargetCloseError, "Session closed", "Connection closed", "Protocol error": the browser or page went away.
  return new RetryableJobError(`Chromium failed while rendering the PDF: ${message}`);
}
