// What the tests of the leader's Redis duties (the reconciler, a new dispatcher's recovery) share: the file's test
// database with one organization, a private Redis (they flush it) and the job queues on it under `prefix`; made before
// the file's tests, closed after them.
import { newId } from "@conveyor/db";
import { JobQueues, createRedis, waitForRedis, type RedisClient } from "@conveyor/queue";
import { createTestDatabase, startPrivateRedis, type PrivateRedis, type TestDatabase } from "@conveyor/testkit";

export function postgresAndRedis(options: { prefix: string; orgName: string }) {
  let database: TestDatabase;
  let server: PrivateRedis;
  let redis: RedisClient;
  let queues: JobQueues;
  const orgId = newId();
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startPrivateRedis();
    redis = createRedis(server.url, "producer");
    await waitForRedis(redis, 5_000);
    queues = new JobQueues({ connection: redis, prefix: options.prefix });
    await database.db.prisma.organization.create({ data: { id: orgId, name: options.orgName } });
  });
  afterAll(async () => {
    await queues.close();
    redis.disconnect();
    await server.stop();
    await database.drop();
  });
  return {
    orgId,
    get pool() {
      return database.db.pool;
    },
    get redis() {
      return redis;
    },
    get queues() {
      return queues;
    },
    /** What the reconciler and the dispatcher's recovery (restoreMissing) are handed. */
    get deps() {
      return { pool: database.db.pool, redis, queues, prefix: options.prefix };
    },
  };
}
