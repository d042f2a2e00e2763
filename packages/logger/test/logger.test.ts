import { PassThrough } from "node:stream";
import { createLogger, redactText, requestLineWriter } from "@conveyor/logger";

function capture(json: boolean) {
  let out = "";
  const stream = new PassThrough().on("data", (c: Buffer) => (out += c));
  const logger = createLogger({ service: "test", json, stream });
  return { logger, out: () => out };
}

const flush = () => new Promise((r) => setImmediate(r));

describe("logger redaction", () => {
  it("drops credential and payload fields whatever their nesting", async () => {
    const { logger, out } = capture(true);
    logger.info("request", {
      headers: { authorization: "Bearer abc.def.ghi", "x-api-key": "cvk_123", accept: "application/json" },
      password: "correct horse battery staple",
      payload: { to: "+254700000000" },
      nested: { inviteToken: "tok", apiKey: "k", keyHash: "h", count: 3 },
    });
    await flush();
    const line = JSON.parse(out().trim());
    expect(line.headers).toEqual({ authorization: "[redacted]", "x-api-key": "[redacted]", accept: "application/json" });
    expect(line.password).toBe("[redacted]");
    expect(line.payload).toBe("[redacted]");
    expect(line.nested).toEqual({ inviteToken: "[redacted]", apiKey: "[redacted]", keyHash: "[redacted]", count: 3 });
    for (const secret of ["abc.def.ghi", "cvk_123", "correct horse", "+254700000000"]) expect(out()).not.toContain(secret);
  });

  it("masks API keys, JWTs, bearer credentials and invite tokens inside messages", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";
    const text = redactText(`key cvk_7Hq2xYz then ${jwt} and Authorization: Bearer s3cr3t and /accept-invite?token=AbC_d-1&x=1 whsec_QUJD`);
    expect(text).not.toMatch(/7Hq2xYz|s3cr3t|AbC_d-1|QUJD|eyJzdWIi/);
    expect(text).toContain("cvk_[redacted]");
    expect(text).toContain("?token=[redacted]&x=1");
  });

  it("keeps one log call on one line even with CR/LF in the message (readable format)", async () => {
    const { logger, out } = capture(false);
    logger.info('user "a@b.c"\r\nFAKE 2026-01-01 error [api] injected\n{"level":"error"}');
    await flush();
    expect(out().trimEnd().split("\n")).toHaveLength(1);
    expect(out()).toContain("\\r\\nFAKE");
  });

  it("keeps one log call on one line in JSON format", async () => {
    const { logger, out } = capture(true);
    logger.info("line one\nline two", { url: "https://x.test/\r\nSet-Cookie: a=b" });
    await flush();
    expect(out().trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("request lines (the access log)", () => {
  afterEach(() => jest.useRealTimers());

  it("writes exactly what logger.log writes, in JSON, whatever the texts", async () => {
    jest.useFakeTimers({ now: new Date("2026-12-07T14:30:00.123Z"), doNotFake: ["setImmediate", "nextTick"] });
    const lines: [string, string, string][] = [
      ["info", "POST /jobs 202 1.3ms", "0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b"],
      ["error", "GET /jobs/x 500 12.0ms", "client.id:1-2_3"],
      ["info", "GET /keys/cvk_7Hq2xYz 404 0.4ms", "r"],
      ["info", 'GET /a"b\\c 404 0.1ms', "r"],
      ["info", "GET /é/\u2028/\u0001 404 0.1ms", "id"],
      ["info", "GET /accept-invite?token=abc 200 1.0ms", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"],
    ];
    const viaWinston = capture(true);
    const viaWriter = capture(true);
    const write = requestLineWriter(viaWriter.logger);
    for (const [level, message, requestId] of lines) {
      viaWinston.logger.log(level, message, { requestId });
      write(level as "info" | "error", message, requestId);
    }
    await flush();
    expect(viaWriter.out().split("\n")).toHaveLength(lines.length + 1);
    expect(viaWriter.out()).toBe(viaWinston.out());
    expect(viaWriter.out()).not.toMatch(/7Hq2xYz|eyJzdWIi/);
  });

  it("writes nothing below the logger's level, and goes through winston for a readable logger", async () => {
    let out = "";
    const quiet = createLogger({ service: "test", json: true, level: "warn", stream: new PassThrough().on("data", (c: Buffer) => (out += c)) });
    requestLineWriter(quiet)("info", "GET / 200 1.0ms", "r");
    requestLineWriter(quiet)("error", "GET / 500 1.0ms", "r");
    const readable = capture(false);
    requestLineWriter(readable.logger)("info", "GET / 200 1.0ms", "r1");
    await flush();
    expect(out).not.toContain("200");
    expect(JSON.parse(out.trim())).toMatchObject({ level: "error", message: "GET / 500 1.0ms", requestId: "r" });
    expect(readable.out()).toMatch(/ info \[test\] GET \/ 200 1\.0ms \{"requestId":"r1"\}\n$/);
  });
});
