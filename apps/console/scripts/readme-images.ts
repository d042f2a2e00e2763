// `npm run readme-images -w @conveyor/console`: copies the screenshots the console's browser tests made
// (test-artifacts/console) that the README shows into docs/images. Run the tests first; nothing is drawn by hand.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../../..");
const FROM = path.join(ROOT, "test-artifacts/console");
const TO = path.join(ROOT, "docs/images");
const SHOWN = [
  "jobs",
  "jobs-bulk-confirm",
  "job-pdf",
  "jobs-375",
  "login",
  "overview",
  "schedules-new",
  "team",
  "webhooks-deliveries",
  "api-keys-created",
  // Issue 38 (second-pass.test.ts).
  "retries",
  "jobs-cards-375",
  "failure-groups-retrying",
  "queues-375",
  // Issue 38, the Workers view (workers.test.ts).
  "workers",
  "workers-375",
  // Issue 38, second part (console-views.test.ts).
  "saved-views",
  "webhook-bulk-redeliver-confirm",
  "queue-charts",
];

mkdirSync(TO, { recursive: true });
const missing = SHOWN.filter((name) => !existsSync(path.join(FROM, `${name}.png`)));
if (missing.length) {
  process.stderr.write(`Missing screenshots (run npm test -- apps/console first): ${missing.join(", ")}\n`);
  process.exitCode = 1;
} else {
  for (const name of SHOWN) copyFileSync(path.join(FROM, `${name}.png`), path.join(TO, `console-${name}.png`));
  process.stdout.write(`Copied ${SHOWN.length} screenshots into docs/images.\n`);
}
