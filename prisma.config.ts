// Read by the Prisma CLI (`prisma generate`, and `prisma migrate deploy` in the Docker migrate service).
// The application itself never reads this file: it takes DATABASE_URL from its parsed configuration.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@localhost:5432/conveyor" },
});
