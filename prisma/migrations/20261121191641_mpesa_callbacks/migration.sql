-- CreateTable
CREATE TABLE "job_callbacks" (
    "job_id" UUID NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "push_started_at" TIMESTAMPTZ(3),
    "checkout_request_id" TEXT,
    "merchant_request_id" TEXT,
    "callback_received_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "job_callbacks_pkey" PRIMARY KEY ("job_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "job_callbacks_checkout_request_id_key" ON "job_callbacks"("checkout_request_id");

-- AddForeignKey
ALTER TABLE "job_callbacks" ADD CONSTRAINT "job_callbacks_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
