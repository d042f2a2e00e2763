// How browser tests start Chromium: Debian's /usr/bin/chromium (driven by playwright-core), with the flags it needs
// running as root in a container and without the background traffic (updates, sync, networking) nobody waits for.
export const CHROMIUM_PATH = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
