// A database and a Redis prefix for the service processes one describe block starts: made before its tests,
// dropped and deleted after them. The object is filled in by beforeAll; `env` is what a process needs to use both.
import { createTestDatabase, type TestDatabase } from "./postgres";
import { deleteRedisPrefix, testRedisPrefix, TEST_REDIS_URL } from "./redis";

export type SuiteStorage = {
  database: TestDatabase;
  prefix: string;
  /** DATABASE_URL, REDIS_URL and REDIS_PREFIX for a spawned API or worker. */
  env(): { DATABASE_URL: string; REDIS_URL: string; REDIS_PREFIX: string };
};

export function suiteStorage(): SuiteStorage {
  const storage: SuiteStorage = {
    database: undefined as unknown as TestDatabase,
    prefix: testRedisPrefix(),
    env: () => ({ DATABASE_URL: storage.database.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: storage.prefix }),
  };
  beforeAll(async () => {
    storage.database = await createTestDatabase();
  });
  afterAll(async () => {
    await storage.database.drop();
    await deleteRedisPrefix(storage.prefix);
  });
  return storage;
}
