import { PassThrough } from "node:stream";
import { createLogger, redactText } from "@conveyor/logger";

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
