// The migration that dropped job_callbacks (mobile_money_stk on a step and a waitpoint, docs/reference/lifecycle.md#waitpoints-and-durable-steps) keeps pushes in
// flight working: run on a database holding job_callbacks rows as the old handler left them, it makes each push whose
// callback has not come a waitpoint its secret authenticates, and gives a job still to run the steps the handler
// replays instead of pushing again.
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { isStkCallbackSecret, newId, readSteps, recordJobCallback } from "../src";

const MIGRATION = path.resolve(__dirname, "../../../prisma/migrations/20261128074131_mobile_money_stk_waitpoints/migration.sql");

let database: TestDatabase;
let orgId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await database.db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'M-Pesa migration org')", [orgId]);
  // job_callbacks as the migration before this one left it.
  await database.db.pool.query(`
    CREATE TABLE "job_callbacks" (
      "job_id" UUID NOT NULL, "secret_hash" BYTEA NOT NULL, "push_started_at" TIMESTAMPTZ(3), "checkout_request_id" TEXT,
      "merchant_request_id" TEXT, "callback_received_at" TIMESTAMPTZ(3), "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
      CONSTRAINT "job_callbacks_pkey" PRIMARY KEY ("job_id"));
    CREATE UNIQUE INDEX "job_callbacks_checkout_request_id_key" ON "job_callbacks"("checkout_request_id");
    ALTER TABLE "job_callbacks" ADD CONSTRAINT "job_callbacks_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;`);
});
afterAll(() => database.drop());

type Old = { status: string; checkout?: string; started?: boolean; calledBack?: boolean };

/** A mobile_money_stk job and its job_callbacks row; its id and callback secret. */
async function oldPush(old: Old): Promise<{ id: string; secret: string; secretHash: Buffer }> {
  const id = newId();
  const secret = randomBytes(32).toString("base64url");
  const secretHash = createHash("sha256").update(secret).digest();
  const result = old.status === "done" ? { CheckoutRequestID: old.checkout, MerchantRequestID: "m-1" } : null;
  await database.db.pool.query(
    `INSERT INTO jobs (id, org_id, type, status, payload, result, retries, created_at, updated_at)
     VALUES ($1, $2, 'mobile_money_stk', $3::job_status, '{"phone":"254708374149","amount":1,"ref":"A"}', $4, 0, now(), now())`,
    [id, orgId, old.status, result],
  );
  await database.db.pool.query(
    `INSERT INTO job_callbacks (job_id, secret_hash, push_started_at, checkout_request_id, merchant_request_id, callback_received_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, secretHash, old.started === false ? null : new Date(), old.checkout ?? null, old.checkout ? "m-1" : null, old.calledBack ? new Date() : null],
  );
  return { id, secret, secretHash };
}

it("turns pushes awaiting their callback into waitpoints and steps, and the old callback URLs still work", async () => {
  const doneAwaiting = await oldPush({ status: "done", checkout: "ws_CO_done" });
  const doneCalledBack = await oldPush({ status: "done", checkout: "ws_CO_called", calledBack: true });
  const retrying = await oldPush({ status: "pending", checkout: "ws_CO_retrying" });
  const unknown = await oldPush({ status: "pending" });
  const refused = await oldPush({ status: "pending", started: false });

  await database.db.pool.query(await readFile(MIGRATION, "utf8"));
  const table = await database.db.pool.query("SELECT to_regclass('job_callbacks') AS t");
  expect(table.rows[0].t).toBeNull();

  const { rows } = await database.db.pool.query<{ job_id: string; status: string; description: string; tags: string[]; id: string }>(
    "SELECT job_id, status, description, tags, id FROM waitpoints WHERE org_id = $1",
    [orgId],
  );
  expect(rows.map((r) => r.job_id).sort()).toEqual([doneAwaiting.id, retrying.id, unknown.id].sort());
  for (const row of rows) {
    expect(row).toMatchObject({ status: "waiting", description: "M-Pesa STK push callback", tags: ["mobile_money_stk"] });
    expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  }
  const waitpointOf = (jobId: string) => rows.find((r) => r.job_id === jobId)!.id;
  for (const push of [doneAwaiting, retrying, unknown]) expect(await isStkCallbackSecret(database.db.pool, push.id, push.secretHash)).toBe(true);
  expect(await isStkCallbackSecret(database.db.pool, doneCalledBack.id, doneCalledBack.secretHash)).toBe(false);

  // A job still to run replays the accepted push (and waits for its callback), or finds its outcome unknown.
  const retryingSteps = await readSteps(database.db.pool, retrying.id);
  expect([...retryingSteps.keys()].sort()).toEqual(["push 1", "push 1: callback waitpoint"]);
  expect(JSON.parse(retryingSteps.get("push 1")!.resultJson!)).toEqual({
    waitpoint_id: waitpointOf(retrying.id),
    accepted: { CheckoutRequestID: "ws_CO_retrying", MerchantRequestID: "m-1", ResponseDescription: "Accepted", CustomerMessage: "" },
  });
  const prepared = JSON.parse(retryingSteps.get("push 1: callback waitpoint")!.resultJson!);
  expect(prepared).toEqual({ waitpoint_id: waitpointOf(retrying.id), started_at: expect.any(String) });
  expect(Number.isNaN(new Date(prepared.started_at).getTime())).toBe(false);
  expect([...(await readSteps(database.db.pool, unknown.id)).keys()]).toEqual(["push 1: callback waitpoint"]);
  expect((await readSteps(database.db.pool, refused.id)).size).toBe(0);
  expect((await readSteps(database.db.pool, doneAwaiting.id)).size).toBe(0);

  // A job already over gets its callback as before: result.callback and a log line.
  const callback = { result_code: 0, result_desc: "ok", mpesa_receipt_number: "QK7MIG0001" };
  const input = {
    jobId: doneAwaiting.id,
    secretHash: doneAwaiting.secretHash,
    callback,
    log: { level: "info" as const, message: "M-Pesa callback: ResultCode 0 (ok)" },
    at: new Date(),
  };
  expect(await recordJobCallback(database.db.pool, { ...input, checkoutRequestId: "ws_CO_other" })).toBe("mismatch");
  expect(await recordJobCallback(database.db.pool, { ...input, checkoutRequestId: "ws_CO_done" })).toBe("recorded");
  expect(await recordJobCallback(database.db.pool, { ...input, checkoutRequestId: "ws_CO_done" })).toBe("duplicate");
  const job = await database.db.pool.query("SELECT result FROM jobs WHERE id = $1", [doneAwaiting.id]);
  expect(job.rows[0].result).toEqual({ CheckoutRequestID: "ws_CO_done", MerchantRequestID: "m-1", callback });
  const logs = await database.db.pool.query("SELECT level, message FROM job_logs WHERE job_id = $1", [doneAwaiting.id]);
  expect(logs.rows).toEqual([{ level: "info", message: "M-Pesa callback: ResultCode 0 (ok)" }]);
});
