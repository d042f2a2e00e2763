// GET /events and GET /jobs/{id}/events (docs/reference/events.md#events, docs/reference/robustness.md#r36), read as a client would (eventsource-parser over
// HTTP) from the real app, while events are written by the real data-access functions the API and the workers use.
// A second organization writes events all along; none of them may ever reach the first one's streams.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import pg from "pg";
import { claimJobs, insertJobs, newId, writeOutcomes } from "@conveyor/db";
import { metricSample, openSse, waitFor, type SseClient, type SseEvent } from "@conveyor/testkit";
import { createApiKey, createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { createApp } from "../src/app";
import { responseSchemas } from "../src/declarations/responses";
import { HEARTBEAT_MS } from "../src/services/infrastructure/event-hub";
import { MAX_BUFFERED_BYTES } from "../src/services/infrastructure/event-stream";

let api: TestApi;
let base: string;
let owner: TestMember;
let other: TestMember;
let otherKey: string;
let auth: Record<string, string>;
const open: SseClient[] = [];

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  base = await api.listen();
  owner = await createOrg(api.database.db, api.deps.config);
  other = await createOrg(api.database.db, api.deps.config);
  otherKey = (await createApiKey(api.database.db, other)).key;
  auth = { Authorization: `Bearer ${owner.token}` };
});
afterEach(() => {
  for (const client of open.splice(0)) client.close();
});
afterAll(() => api.close());

const pool = () => api.database.db.pool;

async function stream(path: string, headers: Record<string, string> = auth, at = base): Promise<SseClient> {
  const client = await openSse(`${at}${path}`, headers);
  open.push(client);
  return client;
}

/** Creates jobs of `orgId` (each writes its job.created event) in one statement. */
async function createJobs(orgId: string, count: number, db: pg.Pool | pg.PoolClient = pool()): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId());
  await insertJobs(
    db,
    ids.map((id) => ({ id, orgId, type: "word_count", payloadJson: '{"text":"secret payload"}', maxRetries: 0, createdAt: new Date() })),
  );
  return ids;
}

/** Starts and finishes jobs as a worker would (job.started, then job.succeeded or job.failed). */
async function finishJobs(ids: string[], outcome: { status: "done" | "failed"; result?: string } = { status: "done" }): Promise<void> {
  const fence = `test-${newId()}`;
  await claimJobs(
    pool(),
    ids.map((id) => ({ id, fence })),
  );
  await writeOutcomes(
    pool(),
    [],
    ids.map((id) => ({
      id,
      fence,
      status: outcome.status,
      retries: 0,
      result: outcome.status === "done" ? (outcome.result ?? '{"ok":true}') : null,
      error: outcome.status === "failed" ? "it broke" : null,
      runAt: null,
    })),
  );
}

async function storedEvents(orgId: string): Promise<{ id: string; type: string; job_id: string }[]> {
  const { rows } = await pool().query<{ id: string; type: string; job_id: string }>(
    "SELECT id::text, type, job_id FROM events WHERE org_id = $1 ORDER BY events.id",
    [orgId],
  );
  return rows;
}

/** The newest event id of any org: a stream resuming after it gets exactly what is written from now on. */
async function latestId(): Promise<string> {
  const { rows } = await pool().query<{ id: string }>("SELECT COALESCE(max(id), 0)::text AS id FROM events");
  return rows[0]!.id;
}

type EventJson = { id: number; type: string; time: string; job_id: string; data: Record<string, unknown> };
const parsed = (events: SseEvent[]) => events.map((e) => JSON.parse(e.data) as EventJson);

async function gauge(name: string): Promise<number> {
  const res = await api.request.get("/metrics");
  return metricSample(res.text, name) ?? NaN;
}

describe("GET /events", () => {
  it("streams the org's new events in id order: id, event and data lines, data the documented event without payload", async () => {
    const mine = await stream("/events");
    const theirs = await stream("/events", { "X-API-Key": otherKey });
    expect(mine.status).toBe(200);
    expect(mine.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(mine.headers["cache-control"]).toBe("no-store");
    expect(mine.headers["x-request-id"]).toBeTruthy();

    const ids = await createJobs(owner.orgId, 3);
    const foreign = await createJobs(other.orgId, 2);
    await finishJobs(ids.slice(0, 1));

    const events = await mine.waitForEvents(5);
    const json = parsed(events);
    expect(json.map((e) => [e.type, e.job_id])).toEqual([
      ["job.created", ids[0]],
      ["job.created", ids[1]],
      ["job.created", ids[2]],
      ["job.started", ids[0]],
      ["job.succeeded", ids[0]],
    ]);
    for (const [i, e] of events.entries()) {
      expect(e.id).toBe(String(json[i]!.id));
      expect(e.event).toBe(json[i]!.type);
      expect(responseSchemas.Event.validate(json[i]).error).toBeUndefined();
      expect(json[i]!.data).not.toHaveProperty("payload");
      expect(json[i]!.data.id).toBe(json[i]!.job_id);
    }
    expect(json.map((e) => e.id)).toEqual([...json.map((e) => e.id)].sort((a, b) => a - b));
    expect(json[4]!.data).toMatchObject({ status: "done", result: { ok: true }, error: null });
    expect((await storedEvents(owner.orgId)).slice(-5).map((e) => Number(e.id))).toEqual(json.map((e) => e.id));

    const seenByThem = parsed(await theirs.waitForEvents(2));
    expect(seenByThem.map((e) => e.job_id)).toEqual(foreign);
    expect(parsed(mine.events).map((e) => e.job_id)).not.toEqual(expect.arrayContaining([foreign[0]]));
  });

  it("resumes with Last-Event-ID (header or query, on any replica) without a gap or a duplicate across 500 events", async () => {
    const replica = createServer(createApp(api.deps));
    await new Promise<void>((resolve) => replica.listen(0, "127.0.0.1", resolve));
    const replicaUrl = `http://127.0.0.1:${(replica.address() as AddressInfo).port}`;
    try {
      const before = await storedEvents(owner.orgId);
      const first = await stream("/events", { ...auth, "Last-Event-ID": before[before.length - 1]?.id ?? "0" });
      // 500 of ours in 50 transactions over 5 connections (so they commit out of id order), with the other org's between.
      const writing = (async () => {
        for (let round = 0; round < 10; round++) {
          await Promise.all([...Array.from({ length: 5 }, () => createJobs(owner.orgId, 10)), createJobs(other.orgId, 3)]);
        }
      })();
      await first.waitForEvents(150, 30_000);
      first.close();
      const received = [...first.events];
      const lastId = received[received.length - 1]!.id!;

      // The next part from the other replica, resuming by header; then the rest by query parameter.
      const second = await stream("/events", { ...auth, "Last-Event-ID": lastId }, replicaUrl);
      await second.waitForEvents(150, 30_000);
      second.close();
      received.push(...second.events);
      await writing;
      const third = await stream(`/events?last_event_id=${received[received.length - 1]!.id!}`);
      const total = (await storedEvents(owner.orgId)).length - before.length;
      expect(total).toBe(500);
      await third.waitForEvents(500 - received.length, 30_000);
      received.push(...third.events);

      const expected = (await storedEvents(owner.orgId)).slice(before.length).map((e) => e.id);
      expect(received.map((e) => e.id)).toEqual(expected);
      expect(new Set(received.map((e) => e.id)).size).toBe(500);
      expect(parsed(received).every((e) => e.type === "job.created")).toBe(true);
    } finally {
      replica.closeAllConnections();
      await new Promise((resolve) => replica.close(resolve));
    }
  });

  it("replays from Last-Event-ID only the org's events, then continues live", async () => {
    const [old] = await createJobs(owner.orgId, 1);
    await createJobs(other.orgId, 1);
    const start = (await storedEvents(owner.orgId)).find((e) => e.job_id === old)!.id;
    const later = await createJobs(owner.orgId, 2);
    const client = await stream("/events", { ...auth, "Last-Event-ID": start });
    await client.waitForEvents(2);
    const live = await createJobs(owner.orgId, 1);
    const json = parsed(await client.waitForEvents(3));
    expect(json.map((e) => e.job_id)).toEqual([...later, ...live]);
  });

  it("filters by job_id and by type", async () => {
    const start = await latestId();
    const [a, b] = await createJobs(owner.orgId, 2);
    const byJob = await stream(`/events?job_id=${a}&last_event_id=0`);
    const byType = await stream(`/events?type=job.started,job.failed&last_event_id=${start}`);
    const otherOrgsJob = await stream(`/events?job_id=${a}`, { "X-API-Key": otherKey });
    await finishJobs([a!], { status: "done" });
    await finishJobs([b!], { status: "failed" });

    expect(parsed(await byJob.waitForEvents(3)).map((e) => [e.type, e.job_id])).toEqual([
      ["job.created", a],
      ["job.started", a],
      ["job.succeeded", a],
    ]);
    expect(parsed(await byType.waitForEvents(3)).map((e) => [e.type, e.job_id])).toEqual([
      ["job.started", a],
      ["job.started", b],
      ["job.failed", b],
    ]);
    // A later event proves the other org's stream was read past these jobs' events.
    const [theirs] = await createJobs(other.orgId, 1);
    expect(parsed(await otherOrgsJob.waitForEvents(0)).length).toBe(0);
    const catchAll = await stream("/events?last_event_id=0", { "X-API-Key": otherKey });
    await waitFor(() => parsed(catchAll.events).some((e) => e.job_id === theirs), "the other org's own event");
    expect(parsed(catchAll.events).filter((e) => e.job_id === a || e.job_id === b)).toEqual([]);
    expect(otherOrgsJob.events).toEqual([]);
  });

  it("never skips an event whose transaction commits after a later one's (the horizon)", async () => {
    const client = await stream("/events", { ...auth, "Last-Event-ID": await latestId() });
    const slow = await pool().connect();
    try {
      await slow.query("BEGIN");
      const [early] = await createJobs(owner.orgId, 1, slow);
      const [late] = await createJobs(owner.orgId, 1);
      // The window in which a tail that ignored the horizon would deliver the later event and move past the earlier
      // id: the tail has read since the later event committed, and found it waiting above the horizon.
      await waitFor(async () => (await gauge("conveyor_event_tail_waiting")) === 1, "the tail to see the later event wait");
      expect(client.events).toEqual([]);
      await slow.query("COMMIT");
      const json = parsed(await client.waitForEvents(2));
      expect(json.map((e) => e.job_id)).toEqual([early, late]);
      expect(json[0]!.id).toBeLessThan(json[1]!.id);
    } finally {
      slow.release();
    }
  });

  it.each([
    ["Last-Event-ID: abc", "/events", { "Last-Event-ID": "abc" }, "headers.last-event-id"],
    ["Last-Event-ID: -1", "/events", { "Last-Event-ID": "-1" }, "headers.last-event-id"],
    ["Last-Event-ID beyond 2^53", "/events", { "Last-Event-ID": "99999999999999999" }, "headers.last-event-id"],
    ["last_event_id=1.5", "/events?last_event_id=1.5", {}, "query.last_event_id"],
    ["an unknown type", "/events?type=job.completed", {}, "query.type"],
    ["an empty type", "/events?type=,", {}, "query.type"],
    ["a malformed job_id", "/events?job_id=nope", {}, "query.job_id"],
    ["an unknown parameter", "/events?status=done", {}, "query.status"],
  ])("refuses %s with 400 validation_failed", async (_what, path, headers, detail) => {
    const res = await api.request.get(path).set(auth).set(headers);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(detail);
  });

  it("needs a credential (401) and takes API keys", async () => {
    expect((await api.request.get("/events")).status).toBe(401);
    const viaKey = await stream("/events", { "X-API-Key": (await createApiKey(api.database.db, owner)).key });
    expect(viaKey.status).toBe(200);
  });

  it("drops a client that stops reading once its buffer passes the bound, while a reading client gets everything", async () => {
    const reader = await stream("/events?type=job.succeeded");
    const streamsBefore = await gauge("conveyor_event_streams");
    // A client that sends its request and never reads: TCP's buffers fill, then the server's.
    const stalled = net.connect(Number(new URL(base).port), "127.0.0.1");
    await new Promise((resolve) => stalled.once("connect", resolve));
    stalled.write(`GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${owner.token}\r\n\r\n`);
    stalled.pause();
    await waitFor(async () => (await gauge("conveyor_event_streams")) === streamsBefore + 1, "the stalled stream to open");

    // 300 events of ~100 KB (a large result): about 30 MB, far more than the bound plus what TCP buffers.
    const big = JSON.stringify({ blob: "x".repeat(100_000) });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const batch = await createJobs(owner.orgId, 50);
      await finishJobs(batch, { status: "done", result: big });
      ids.push(...batch);
    }
    expect(MAX_BUFFERED_BYTES).toBeLessThan(30_000_000);
    await waitFor(async () => (await gauge("conveyor_event_streams")) === streamsBefore, "the stalled stream to be dropped", 30_000);
    const got = parsed(await reader.waitForEvents(300, 30_000));
    expect(got.map((e) => e.job_id)).toEqual(ids);
    expect(api.logs()).toMatch(/event stream dropped: more than \d+ bytes of events waited for the client/);
    stalled.destroy();
  }, 60_000);

  it(
    `sends a comment line every ${HEARTBEAT_MS / 1000} s`,
    async () => {
      const client = await stream("/events");
      await waitFor(() => client.comments.filter((c) => c.text.trim() === "keep-alive").length >= 2, "two keep-alive comments", 2 * HEARTBEAT_MS + 5_000, 100);
      const [a, b] = client.comments.filter((c) => c.text.trim() === "keep-alive");
      expect(b!.at - a!.at).toBeGreaterThan(HEARTBEAT_MS - 1_000);
      expect(b!.at - a!.at).toBeLessThan(HEARTBEAT_MS + 1_000);
    },
    2 * HEARTBEAT_MS + 15_000,
  );

  it("leaks no subscriber, listener or connection over 1,000 connect/disconnect cycles (and 100 that leave before their stream begins)", async () => {
    const connections = async () =>
      Number(
        (await pool().query<{ n: string }>("SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"))
          .rows[0]!.n,
      );
    const busy = () => pool().totalCount - pool().idleCount;
    await waitFor(async () => (await gauge("conveyor_event_streams")) === 0, "no stream open");

    for (let round = 0; round < 100; round++) {
      const clients = await Promise.all(Array.from({ length: 10 }, () => openSse(`${base}/events?type=job.created`, auth)));
      for (const client of clients) client.close();
    }
    // And clients gone before their stream began (while the request was being checked).
    for (let i = 0; i < 100; i++) {
      const socket = net.connect(Number(new URL(base).port), "127.0.0.1");
      socket.on("error", () => {});
      socket.write(`GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${owner.token}\r\n\r\n`);
      socket.destroy();
    }
    await waitFor(async () => (await gauge("conveyor_event_streams")) === 0, "every stream to be unsubscribed");
    // Nothing is checked out of the pool but the tail's LISTEN connection, while it lingers.
    expect(busy()).toBe(await gauge("conveyor_event_tail_listening"));
    expect(pool().waitingCount).toBe(0);
    // The tail keeps listening a while after its last stream, then closes its connection.
    await waitFor(async () => (await gauge("conveyor_event_tail_listening")) === 0, "the tail to stop listening", 20_000, 200);
    expect(busy()).toBe(0);
    const after = await connections();
    expect(after).toBeLessThanOrEqual(pool().totalCount + 1);
    // It starts again for the next stream.
    const client = await stream("/events");
    const [id] = await createJobs(owner.orgId, 1);
    expect(parsed(await client.waitForEvents(1))[0]!.job_id).toBe(id);
  }, 120_000);
});

describe("GET /jobs/{id}/events", () => {
  it("replays a finished job's history and closes", async () => {
    const [id] = await createJobs(owner.orgId, 1);
    await finishJobs([id!], { status: "failed" });
    const client = await stream(`/jobs/${id}/events`);
    await client.ended;
    expect(parsed(client.events).map((e) => e.type)).toEqual(["job.created", "job.started", "job.failed"]);
  });

  it("streams a live job and closes after its final event", async () => {
    const [id, sibling] = await createJobs(owner.orgId, 2);
    const client = await stream(`/jobs/${id}/events`);
    await client.waitForEvents(1);
    await finishJobs([sibling!]);
    await finishJobs([id!]);
    await client.ended;
    expect(parsed(client.events).map((e) => [e.type, e.job_id])).toEqual([
      ["job.created", id],
      ["job.started", id],
      ["job.succeeded", id],
    ]);
  });

  it("filters by type, and still ends after the job's final event (live or replayed)", async () => {
    const [id] = await createJobs(owner.orgId, 1);
    const live = await stream(`/jobs/${id}/events?type=job.started`);
    await finishJobs([id!]);
    await live.ended;
    expect(parsed(live.events).map((e) => e.type)).toEqual(["job.started"]);
    const replayed = await stream(`/jobs/${id}/events?type=job.created`);
    await replayed.ended;
    expect(parsed(replayed.events).map((e) => e.type)).toEqual(["job.created"]);
  });

  it("resumes after Last-Event-ID, and ends at once when the client already has the final event", async () => {
    const [id] = await createJobs(owner.orgId, 1);
    await finishJobs([id!]);
    const all = (await storedEvents(owner.orgId)).filter((e) => e.job_id === id);
    const resumed = await stream(`/jobs/${id}/events`, { ...auth, "Last-Event-ID": all[0]!.id });
    await resumed.ended;
    expect(resumed.events.map((e) => e.id)).toEqual(all.slice(1).map((e) => e.id));
    const done = await stream(`/jobs/${id}/events?last_event_id=${all[2]!.id}`);
    await done.ended;
    expect(done.events).toEqual([]);
  });

  it("is 404 for another org's job, an unknown id and a malformed one", async () => {
    const [theirs] = await createJobs(other.orgId, 1);
    for (const id of [theirs, newId(), "nope"]) {
      const res = await api.request.get(`/jobs/${id}/events`).set(auth);
      expect([id, res.status, res.body.error?.code]).toEqual([id, 404, "not_found"]);
    }
  });
});
