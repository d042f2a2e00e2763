// A PNG of a local HTML page (the soak's report) rendered by the machine's Chromium:
// tsx bench/tools/screenshot.ts page.html page.png [width]
import path from "node:path";
import { chromium } from "playwright-core";

async function main(): Promise<void> {
  const [page, png, width = "1150"] = process.argv.slice(2);
  if (!page || !png) throw new Error("usage: screenshot.ts page.html page.png [width]");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  try {
    const tab = await browser.newPage({ viewport: { width: Number(width), height: 900 } });
    await tab.goto(`file://${path.resolve(page)}`);
    await tab.waitForSelector(".uplot");
    await tab.screenshot({ path: png, fullPage: true });
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
