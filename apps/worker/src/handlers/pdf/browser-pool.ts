// One Chromium per worker process, shared by every generate_pdf job: launched on first use, launched again after
// it crashed or disconnected, with a cap on pages open at once. Each job gets its own browser context (no shared
// cookies or cache), with JavaScript off and no network at all, closed when the job ends whatever happened.
import puppeteer, { type Browser, type HTTPRequest, type Page } from "puppeteer-core";
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import type { Logger } from "@conveyor/logger";

export type BrowserPoolOptions = {
  executablePath: string;
  /** Operator log: why Chromium did not start, with its path (job errors name only the setting). */
  logger: Logger;
  /** Pages rendering at once in this process; more wait their turn. Default 2. */
  maxPages?: number;
  /** How long Chromium may take to start. Default 30 s. */
  launchTimeoutMs?: number;
};

const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  // Backstop for what request interception does not see (link prefetch, preconnect, DNS prefetch): every
  // connection goes to a proxy on a port nothing listens on, loopback included, and no host name resolves.
  "--proxy-server=127.0.0.1:1",
  "--proxy-bypass-list=<-loopback>",
  "--host-resolver-rules=MAP * ~NOTFOUND",
];

/** Only inline content may load; a navigation (meta refresh, a form) gets an empty 204 so the document stays. */
function blockNetwork(request: HTTPRequest): void {
  const url = request.url();
  if (url.startsWith("data:") || url.startsWith("about:")) {
    void request.continue().catch(() => {});
  } else if (request.isNavigationRequest()) {
    void request.respond({ status: 204, body: "" }).catch(() => {});
  } else {
    void request.abort("blockedbyclient").catch(() => {});
  }
}

export class BrowserPool {
  private browser?: Promise<Browser>;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;
  private readonly maxPages: number;

  constructor(private readonly options: BrowserPoolOptions) {
    this.maxPages = options.maxPages ?? 2;
  }

  /**
   * Runs `render` with a fresh page. An abort of `signal` closes the page's context at once (pending calls
   * reject) and the call rejects with the signal's reason.
   */
  async withPage<T>(signal: AbortSignal, render: (page: Page) => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      const browser = await this.launched();
      const context = await browser.createBrowserContext();
      const onAbort = () => void context.close().catch(() => {});
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        const page = await context.newPage();
        await page.setJavaScriptEnabled(false);
        await page.setRequestInterception(true);
        page.on("request", blockNetwork);
        return await render(page);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw error;
      } finally {
        signal.removeEventListener("abort", onAbort);
        await context.close().catch(() => {});
      }
    } finally {
      this.release();
    }
  }

  /** Closes the browser; later calls to withPage fail. */
  async close(): Promise<void> {
    this.closed = true;
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await browser.then((b) => b.close()).catch(() => {});
  }

  private launched(): Promise<Browser> {
    if (this.closed) return Promise.reject(new RetryableJobError("The PDF browser is shut down (the worker is stopping)"));
    if (!this.browser) {
      const launching = puppeteer
        .launch({
          executablePath: this.options.executablePath,
          headless: true,
          // Over a pipe, Chromium exits when this process dies, even by SIGKILL: no orphaned browsers.
          pipe: true,
          args: ARGS,
          timeout: this.options.launchTimeoutMs ?? 30_000,
          // The worker handles its own signals and closes the browser on shutdown.
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        })
        .then((browser) => {
          browser.on("disconnected", () => {
            if (this.browser === launching) this.browser = undefined;
          });
          if (this.closed) void browser.close().catch(() => {});
          return browser;
        })
        .catch((error: Error) => {
          if (this.browser === launching) this.browser = undefined;
          throw this.launchFailure(error);
        });
      this.browser = launching;
    }
    return this.browser;
  }

  /** The job's error tells the org what failed; the server's path and Chromium's own words go to the operator. */
  private launchFailure(error: Error): Error {
    const reason = error.message.split("\n")[0]!;
    this.options.logger.error("Chromium could not be started", { executablePath: this.options.executablePath, error: reason });
    // A missing or unusable binary will not fix itself by retrying.
    if (/not found at the configured executablePath|ENOENT|EACCES|no such file/i.test(error.message)) {
      return new PermanentJobError("Chromium could not be started; check the worker's PUPPETEER_EXECUTABLE_PATH setting");
    }
    return new RetryableJobError("Chromium did not start; the worker's log has the reason");
  }

  private async acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw signal.reason;
    if (this.active < this.maxPages) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(turn);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(turn);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter, so `active` stays the same.
    if (next) next();
    else this.active--;
  }
}
