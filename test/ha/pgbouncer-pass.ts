// CI's second pass (docs/reference/high-availability.md#high-availability, docs/reference/robustness.md#r54): the suites that between them issue every kind of statement the service
// sends, run again with the API and the workers behind PgBouncer 1.18 in transaction pooling mode, and the server
// itself as DATABASE_DIRECT_URL. Its counts are added to the first pass's jest results, so CI's closing
// `N passed, N failed` line counts both.
//
// Usage: tsx --conditions=conveyor-source test/ha/pgbouncer-pass.ts [jest-results.json to add to]
//
// The subset, and what each file is here for:
const SUBSET = [
  // API + real worker processes: the batched insert, claim and outcome statements (named when direct), the
  // dispatcher's session (its lock, SET, LISTEN), retries and cancellation.
  "test/job-lifecycle.test.ts",
  // The relay's named statements (events to deliveries, targets, attempts) and its LISTEN.
  "test/webhooks.test.ts",
  // The API's event tail: LISTEN on the direct connection, reads of the event log through the pooler.
  "test/events.test.ts",
  // A database cursor streaming a whole list through the pooler (one transaction holds the server connection).
  "test/list-streaming.test.ts",
  // Flow control: concurrency keys, rate limits, debounce and dedupe transactions.
  "test/flow-control.test.ts",
  // Accounts, members and invites in transactions with their audit entries.
  "apps/api/test/team.test.ts",
  // POST /jobs: batches and graphs (the graph's transaction), idempotency keys; stats' advisory transaction lock.
  "apps/api/test/jobs-api.test.ts",
  "apps/api/test/job-stats.test.ts",
  // The worker registry: registration, heartbeats and the reaper's delete, and GET /workers' read (issue 38).
  "test/workers.test.ts",
  // The listener's reconnects, on the direct pool.
  "packages/db/test/notifications.test.ts",
];
// (test/ha/pgbouncer.test.ts runs in the first pass with PgBouncers of its own: statement names, restarts.)

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot, startPgBouncer } from "@conveyor/testkit";

type JestResults = {
  numPassedTests: number;
  numFailedTests: number;
  numRuntimeErrorTestSuites: number;
  numTotalTests: number;
  success: boolean;
  testResults: unknown[];
};

async function main(): Promise<number> {
  const into = process.argv[2];
  // Under test-artifacts/ (ignored by git and prettier), beside the browser tests' screenshots.
  const output = path.join(repoRoot, "test-artifacts/jest-pgbouncer-results.json");
  mkdirSync(path.dirname(output), { recursive: true });
  rmSync(output, { force: true });
  const pooler = await startPgBouncer({ poolSize: 30 });
  let status: number;
  try {
    process.stdout.write(`[pgbouncer pass] PgBouncer 1.18 (transaction pooling) on port ${pooler.port}; ${SUBSET.length} files\n`);
    const run = spawnSync(
      process.execPath,
      [
        "--conditions=conveyor-source",
        path.join(repoRoot, "node_modules/jest/bin/jest.js"),
        "--ci",
        "--json",
        `--outputFile=${output}`,
        "--runTestsByPath",
        ...SUBSET,
      ],
      { cwd: repoRoot, stdio: "inherit", env: { ...process.env, TEST_POOLER_URL: pooler.url("postgres") } },
    );
    status = run.status ?? 1;
  } finally {
    await pooler.stop();
  }
  if (!existsSync(output)) {
    process.stdout.write("[pgbouncer pass] jest wrote no results\n");
    return 1;
  }
  const pass = JSON.parse(readFileSync(output, "utf8")) as JestResults;
  process.stdout.write(`[pgbouncer pass] ${pass.numPassedTests} passed, ${pass.numFailedTests + pass.numRuntimeErrorTestSuites} failed\n`);
  if (into && existsSync(into)) {
    const first = JSON.parse(readFileSync(into, "utf8")) as JestResults;
    for (const key of ["numPassedTests", "numFailedTests", "numRuntimeErrorTestSuites", "numTotalTests"] as const) first[key] += pass[key];
    first.success = first.success && pass.success;
    first.testResults = [...first.testResults, ...pass.testResults];
    writeFileSync(into, JSON.stringify(first));
  }
  return status;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`[pgbouncer pass] ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
