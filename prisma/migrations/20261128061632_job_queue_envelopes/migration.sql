-- Envelopes (SPEC §19): the dispatcher hands jobs to BullMQ in envelopes of many job ids; each job's queue row names
-- the envelope its current attempt travels in, so the reconciler and a new leader check envelopes against Redis.
-- No index: it is read with the row (by job id), never searched by.
ALTER TABLE "job_queue" ADD COLUMN "envelope_id" UUID;
