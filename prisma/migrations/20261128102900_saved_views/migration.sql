-- Saved views of the console's jobs list (issue 38): a member's named GET /jobs filters in one organization, keyed
-- by the membership so they are that person's alone and go with the membership.
-- CreateTable
CREATE TABLE "saved_views" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "filter" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_views_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "saved_views_org_id_user_id_name_key" ON "saved_views"("org_id", "user_id", "name");

-- AddForeignKey
ALTER TABLE "saved_views" ADD CONSTRAINT "saved_views_org_id_user_id_fkey" FOREIGN KEY ("org_id", "user_id") REFERENCES "memberships"("org_id", "user_id") ON DELETE CASCADE ON UPDATE CASCADE;
