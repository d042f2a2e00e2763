// Prisma's client, for tests' fixtures only (CONTRIBUTING "Reach Postgres one way"): the service reaches Postgres with
// SQL on `db.pool`, and none of its processes loads or builds this client. Tests get it through the test kit's
// databases (`database.db.prisma`), or wrap a database of their own with `withPrisma`.
import { PrismaPg } from "@prisma/adapter-pg";
import type { Database } from "./core/client";
import { PrismaClient } from "./generated/prisma/client";

export type { Prisma, PrismaClient } from "./generated/prisma/client";

/** A database with Prisma's client on its pool. */
export type DatabaseWithPrisma = Database & { prisma: PrismaClient };

/** `db` with Prisma's client on its pool; closing it disconnects the client, then closes `db`. */
export function withPrisma(db: Database): DatabaseWithPrisma {
  const prisma = new PrismaClient({ adapter: new PrismaPg(db.pool) });
  let closed: Promise<void> | undefined;
  return { ...db, prisma, close: () => (closed ??= prisma.$disconnect().then(() => db.close())) };
}
