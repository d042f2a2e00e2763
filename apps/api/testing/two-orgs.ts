// The arrangement most API test files start from: a test API, two organizations' owners (alice, with an API key, and
// bob, whose data must never show through to her), the second organization watched, and the plugin job types the
// file enqueues registered. `close` checks the second organization is untouched, then stops the API.
import { createApiKey, createOrg, type TestMember } from "./factories";
import { createSecondOrg, type SecondOrg } from "./second-org";
import { startTestApi, type TestApi } from "./test-api";

export type TwoOrgs = { api: TestApi; alice: TestMember; bob: TestMember; aliceKey: string; second: SecondOrg; close(): Promise<void> };

export async function startTwoOrgs(options: { jobTypes?: string[] } = {}): Promise<TwoOrgs> {
  const api = await startTestApi();
  const alice = await createOrg(api.database.db, api.deps.config);
  const bob = await createOrg(api.database.db, api.deps.config);
  const aliceKey = (await createApiKey(api.database.db, alice)).key;
  const second = await createSecondOrg(api.database.db);
  for (const name of options.jobTypes ?? []) await api.database.db.pool.query("INSERT INTO job_types (name) VALUES ($1)", [name]);
  await second.watch(api.get);
  return {
    api,
    alice,
    bob,
    aliceKey,
    second,
    async close() {
      await second.expectUntouched({ "X-API-Key": aliceKey });
      await api.close();
    },
  };
}
