// Per-organization caps (issue 27): event streams open on one API process (EVENT_STREAMS_PER_ORG, 429) and webhook
// endpoints (WEBHOOK_ENDPOINTS_PER_ORG, 409), each with a message that names the setting; other organizations are not
// affected, a freed place can be taken again, and concurrent requests cannot pass the cap together.
import { openSse, waitFor, type SseClient } from "@conveyor/testkit";
import { createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { expectError } from "./support/expect-error";

let api: TestApi;
let base: string;
let owner: TestMember;
let other: TestMember;
const open: SseClient[] = [];

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0", EVENT_STREAMS_PER_ORG: "2", WEBHOOK_ENDPOINTS_PER_ORG: "3" });
  base = await api.listen();
  owner = await createOrg(api.database.db, api.deps.config);
  other = await createOrg(api.database.db, api.deps.config);
});
afterEach(() => {
  for (const client of open.splice(0)) client.close();
});
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
async function stream(path: string, by: TestMember): Promise<SseClient> {
  const client = await openSse(`${base}${path}`, as(by));
  open.push(client);
  return client;
}
const streams = async () => {
  const text = (await api.request.get("/metrics")).text;
  return Number(/^conveyor_event_streams (\d+)/m.exec(text)?.[1]);
};

describe("EVENT_STREAMS_PER_ORG", () => {
  it("refuses an organization's stream beyond the cap with 429 too_many_streams, while another organization still opens its own", async () => {
    const first = await stream("/events", owner);
    const second = await stream("/events?type=job.failed", owner);
    expect([first.status, second.status]).toEqual([200, 200]);

    const refused = await stream("/events", owner);
    expect(refused.status).toBe(429);
    await refused.ended;
    const body = JSON.parse(refused.body) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("too_many_streams");
    expect(body.error.message).toMatch(/2 event streams open on this server.*EVENT_STREAMS_PER_ORG/);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error.message).toMatch(/\.$/);

    // Another organization has places of its own.
    expect((await stream("/events", other)).status).toBe(200);

    // A closed stream frees its place.
    first.close();
    await waitFor(async () => (await streams()) === 2, "the closed stream to be unsubscribed");
    expect((await stream("/events", owner)).status).toBe(200);
  });

  it("lets exactly the free places through when many streams are asked for at once", async () => {
    await waitFor(async () => (await streams()) === 0, "no stream open");
    const clients = await Promise.all(Array.from({ length: 8 }, () => stream("/events", owner)));
    expect(clients.map((c) => c.status).sort()).toEqual([200, 200, 429, 429, 429, 429, 429, 429]);
  });
});

describe("WEBHOOK_ENDPOINTS_PER_ORG", () => {
  const create = (by: TestMember, n: number) =>
    api.request
      .post("/webhook-endpoints")
      .set(as(by))
      .send({ url: `https://hooks.example.com/conveyor/${n}`, events: ["job.failed"] });

  it("refuses an endpoint beyond the cap with 409 webhook_endpoint_limit, also when they are created at once, and takes one again after a delete", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, n) => create(owner, n)));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409, 409]);
    const refused = answers.find((r) => r.status === 409)!;
    expectError(refused, 409, "webhook_endpoint_limit");
    expect(refused.body.error.message).toMatch(/3 webhook endpoints.*WEBHOOK_ENDPOINTS_PER_ORG/);
    const list = (await api.request.get("/webhook-endpoints").set(as(owner))).body as { id: string }[];
    expect(list).toHaveLength(3);

    expect((await create(other, 1)).status).toBe(201);

    expect((await api.request.delete(`/webhook-endpoints/${list[0]!.id}`).set(as(owner))).status).toBe(204);
    expect((await create(owner, 7)).status).toBe(201);
    expectError(await create(owner, 8), 409, "webhook_endpoint_limit");
  });
});
