-- In-flight M-Pesa pushes keep working (SPEC §20 "Dogfood"): mobile_money_stk now waits for Safaricom's callback on
-- a waitpoint instead of keeping job_callbacks. Each push whose callback has not come becomes that waitpoint (its
-- token hash is the hash of the CallBackURL's secret, so POST /callbacks/mpesa/{job_id} still authenticates it), and
-- a job not yet over gets the steps the handler replays (apps/worker/src/handlers/mobile-money-stk.ts names them),
-- so a retry never pushes again. A callback for a job already over is recorded as before (result.callback, a log line).
CREATE TEMP TABLE stk_in_flight AS
SELECT c.job_id, j.org_id, j.retries, c.secret_hash, c.checkout_request_id, c.merchant_request_id,
       coalesce(c.push_started_at, c.created_at) AS started_at,
       j.status IN ('done', 'failed', 'cancelled') AS final,
       -- A UUID v7 (the ids the service makes): the time in milliseconds, then random bits.
       encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid AS waitpoint_id
  FROM job_callbacks c JOIN jobs j ON j.id = c.job_id
 WHERE c.callback_received_at IS NULL AND (c.checkout_request_id IS NOT NULL OR c.push_started_at IS NOT NULL);

INSERT INTO waitpoints (id, org_id, status, description, tags, token_hash, expires_at, job_id, created_at)
SELECT waitpoint_id, org_id, 'waiting', 'M-Pesa STK push callback', '{mobile_money_stk}', secret_hash, now() + interval '1 day', job_id, now()
  FROM stk_in_flight;

-- A job still to run (or retry) replays the push instead of sending another: "push 1: callback waitpoint" alone
-- (the push's outcome is unknown: the job fails without pushing), or with "push 1" (accepted: it waits for the callback).
INSERT INTO job_steps (job_id, name, kind, status, attempt, result, started_at, finished_at)
SELECT job_id, 'push 1: callback waitpoint', 'step', 'succeeded', retries + 1,
       jsonb_build_object('waitpoint_id', waitpoint_id, 'started_at', to_json(started_at)), started_at, started_at
  FROM stk_in_flight WHERE NOT final
UNION ALL
SELECT job_id, 'push 1', 'step', 'succeeded', retries + 1,
       jsonb_build_object('waitpoint_id', waitpoint_id, 'accepted', jsonb_build_object('CheckoutRequestID', checkout_request_id,
         'MerchantRequestID', coalesce(merchant_request_id, ''), 'ResponseDescription', 'Accepted', 'CustomerMessage', '')),
       started_at, started_at
  FROM stk_in_flight WHERE NOT final AND checkout_request_id IS NOT NULL;

DROP TABLE stk_in_flight;

-- DropForeignKey
ALTER TABLE "job_callbacks" DROP CONSTRAINT "job_callbacks_job_id_fkey";

-- DropTable
DROP TABLE "job_callbacks";
