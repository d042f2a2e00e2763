-- SPEC §16: the audit log, and the OpenID Connect provider of each organization with the sign-ins on their way through it.

-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "via_sso" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "time" TIMESTAMPTZ(3) NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" UUID,
    "actor_label" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT,
    "target_id" UUID,
    "target_label" TEXT,
    "ip" TEXT,
    "user_agent" TEXT,
    "request_id" TEXT,
    "changes" JSONB,
    "details" JSONB,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "org_sso" (
    "org_id" UUID NOT NULL,
    "issuer" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_secret" BYTEA NOT NULL,
    "default_role" "role" NOT NULL,
    "enforce" BOOLEAN NOT NULL DEFAULT false,
    "metadata" JSONB NOT NULL,
    "updated_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "org_sso_pkey" PRIMARY KEY ("org_id")
);

-- CreateTable
CREATE TABLE "sso_domains" (
    "domain" TEXT NOT NULL,
    "org_id" UUID NOT NULL,

    CONSTRAINT "sso_domains_pkey" PRIMARY KEY ("domain")
);

-- CreateTable
CREATE TABLE "sso_logins" (
    "id" UUID NOT NULL,
    "flow_hash" BYTEA NOT NULL,
    "org_id" UUID NOT NULL,
    "state" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "code_verifier" TEXT NOT NULL,
    "return_to" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sso_logins_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_log_org_time_idx" ON "audit_log"("org_id", "time" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_log_org_actor_idx" ON "audit_log"("org_id", "actor_id", "time" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_log_org_target_idx" ON "audit_log"("org_id", "target_id", "time" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_log_org_action_idx" ON "audit_log"("org_id", "action", "time" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_log_time_idx" ON "audit_log"("time");

-- CreateIndex
CREATE INDEX "sso_domains_org_id_idx" ON "sso_domains"("org_id");

-- CreateIndex
CREATE UNIQUE INDEX "sso_logins_flow_hash_key" ON "sso_logins"("flow_hash");

-- CreateIndex
CREATE INDEX "sso_logins_expires_at_idx" ON "sso_logins"("expires_at");

-- AddForeignKey
ALTER TABLE "org_sso" ADD CONSTRAINT "org_sso_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sso_domains" ADD CONSTRAINT "sso_domains_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sso_logins" ADD CONSTRAINT "sso_logins_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The audit log is append-only (ROBUSTNESS H44). No endpoint changes or deletes an entry, and this makes the database
-- refuse it too, whatever the code path: every UPDATE and TRUNCATE, and every DELETE except those of retention, which names
-- its cut-off in the transaction (SET LOCAL conveyor.audit_delete_before) and may only remove entries older than it,
-- and never one younger than a day. It guards against mistakes of the application; a database superuser can
-- always drop the trigger (docs/decisions.md).
CREATE FUNCTION conveyor_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cut_off timestamptz := NULLIF(current_setting('conveyor.audit_delete_before', true), '')::timestamptz;
BEGIN
  IF TG_OP = 'DELETE' AND cut_off IS NOT NULL AND cut_off <= now() - interval '1 day' AND OLD.time < cut_off THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit log entries cannot be changed or deleted (%)', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION conveyor_audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION conveyor_audit_log_append_only();
