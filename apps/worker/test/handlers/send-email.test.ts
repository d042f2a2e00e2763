// send_email against strict local fakes of SendGrid, Resend and Postmark: the exact request each provider gets,
// the result, and how every answer class becomes a permanent or a retryable failure.
import { PermanentJobError, RetryableJobError, type SendEmailPayload } from "@conveyor/contracts";
import { sendEmailHandler } from "../../src/handlers/send-email";
import { MissingSettingError } from "../../src/handlers/settings";
import { handlerDeps, type TestDeps } from "../fakes/handler-deps";
import {
  POSTMARK_TEST_TOKEN,
  postmarkError,
  startPostmarkFake,
  type PostmarkFake,
  RESEND_TEST_KEY,
  resendError,
  startResendFake,
  type ResendFake,
  SENDGRID_TEST_KEY,
  startSendGridFake,
  type SendGridFake,
} from "@conveyor/testkit/fakes";
import { failureOf, handlerContext, type RecordedContext } from "../support/handler-context";

const BODY = "Your invoice #4471 is ready. Secret-ish contents that must never reach a log line.";
const payload = (overrides: Partial<SendEmailPayload> = {}): SendEmailPayload => ({ to: "ada@example.com", subject: "Invoice 4471", body: BODY, ...overrides });

const PDF = Buffer.from("%PDF-1.7\n%\xe2\xe3 an invoice\n%%EOF\n", "latin1");
const INVOICE_JOB = "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a99";
/** A send_email job that depends on a generate_pdf job, which produced PDF. */
const withInvoice = () =>
  handlerContext({
    type: "send_email",
    dependencies: [{ id: INVOICE_JOB, type: "generate_pdf", status: "done", result: { bytes: PDF.length } }],
    artifacts: { [INVOICE_JOB]: { contentType: "application/pdf", filename: "invoice.pdf", data: PDF } },
  });
const attaching = () => payload({ attachments: [{ filename: "INV-4471.pdf", job: INVOICE_JOB }] });

async function run(deps: TestDeps, p: SendEmailPayload, ctx: RecordedContext = handlerContext({ type: "send_email" })) {
  const result = await sendEmailHandler(deps)(p, ctx);
  return { result, ctx };
}

const failure = (deps: TestDeps, p: SendEmailPayload = payload(), ctx: RecordedContext = handlerContext({ type: "send_email" })) =>
  failureOf(() => sendEmailHandler(deps)(p, ctx));

/** Nothing secret in job logs, in the process logger or in an error message. */
function expectNoSecrets(deps: TestDeps, ctx: RecordedContext, secrets: string[], errors: Error[] = []) {
  const text = [...ctx.lines.map((l) => l.message), ...deps.processOutput, ...errors.map((e) => e.message)].join("\n");
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe("send_email via SendGrid", () => {
  let fake: SendGridFake;
  beforeAll(async () => {
    fake = await startSendGridFake();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const env = (extra: Record<string, string> = {}) =>
    handlerDeps({
      EMAIL_PROVIDER_API_KEY: SENDGRID_TEST_KEY,
      EMAIL_PROVIDER_BASE_URL: fake.url,
      EMAIL_FROM: "Conveyor <noreply@conveyor.test>",
      PROVIDER_TIMEOUT_MS: "2000",
      ...extra,
    });

  it("posts the v3 mail/send JSON with a Bearer key and reads the id from X-Message-Id of the empty 202", async () => {
    const deps = env();
    const { result, ctx } = await run(deps, payload());

    const request = fake.lastRequest();
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v3/mail/send");
    expect(request.headers.authorization).toBe(`Bearer ${SENDGRID_TEST_KEY}`);
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(request.headers.accept).toBe("application/json");
    expect(request.headers["user-agent"]).toMatch(/^Conveyor-Worker\//);
    expect(JSON.parse(request.body)).toEqual({
      personalizations: [{ to: [{ email: "ada@example.com" }] }],
      from: { email: "noreply@conveyor.test", name: "Conveyor" },
      subject: "Invoice 4471",
      content: [{ type: "text/plain", value: BODY }],
      custom_args: { conveyor_job_id: ctx.jobId },
    });
    expect(fake.sent).toHaveLength(1);
    expect(result).toEqual({ provider: "sendgrid", message_id: fake.sent[0]!.messageId, to: "ada@example.com" });
    expect(ctx.lines.map((l) => l.message)).toEqual([
      "Sending via SendGrid to a***@example.com from noreply@conveyor.test",
      `SendGrid accepted message ${fake.sent[0]!.messageId}`,
    ]);
    expectNoSecrets(deps, ctx, [SENDGRID_TEST_KEY, BODY]);
  });

  it("uses the payload's from instead of EMAIL_FROM, and SendGrid is the default provider", async () => {
    await run(env(), payload({ from: "billing@conveyor.test" }));
    expect(JSON.parse(fake.lastRequest().body).from).toEqual({ email: "billing@conveyor.test" });
  });

  it("fails permanently on SendGrid's 401 for a wrong key, without echoing the key", async () => {
    const deps = env({ EMAIL_PROVIDER_API_KEY: "SG.wrong-key-0000" });
    const ctx = handlerContext();
    const error = await failure(deps, payload(), ctx);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("SendGrid answered 401: The provided authorization grant is invalid, expired, or revoked (check EMAIL_PROVIDER_API_KEY)");
    expectNoSecrets(deps, ctx, ["SG.wrong-key-0000", BODY], [error]);
  });

  it.each([
    [
      400,
      { errors: [{ message: "The from email does not contain a valid address.", field: "from.email", help: null }] },
      "SendGrid answered 400: from.email: The from email does not contain a valid address.",
    ],
    [
      403,
      { errors: [{ message: "The from address does not match a verified Sender Identity.", field: "from", help: null }] },
      "SendGrid answered 403: from: The from address does not match a verified Sender Identity.",
    ],
    [413, { errors: [{ message: "Payload too large", field: null, help: null }] }, "SendGrid answered 413: Payload too large"],
  ])("fails permanently on %i with the field and message of SendGrid's error", async (status, body, message) => {
    fake.failNext(status, body);
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message.startsWith(message)).toBe(true);
  });

  it("retries a 429 after X-RateLimit-Reset (epoch seconds)", async () => {
    const reset = Math.floor(Date.now() / 1000) + 120;
    fake.failNext(
      429,
      { errors: [{ message: "too many requests", field: null, help: null }] },
      { "X-RateLimit-Limit": "600", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(reset) },
    );
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("SendGrid answered 429 (rate limited): too many requests");
    expect((error as RetryableJobError).retryAfterMs).toBeGreaterThan(60_000);
    expect((error as RetryableJobError).retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it("retries a 429 after Retry-After when X-RateLimit-Reset is absent", async () => {
    fake.failNext(429, { errors: [{ message: "too many requests", field: null, help: null }] }, { "Retry-After": "7" });
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect((error as RetryableJobError).retryAfterMs).toBe(7000);
  });

  it.each([500, 503])("retries a %i", async (status) => {
    fake.failNext(status, { errors: [{ message: "internal error", field: null, help: null }] });
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe(`SendGrid answered ${status}: internal error`);
  });

  it("retries when SendGrid does not answer within PROVIDER_TIMEOUT_MS", async () => {
    fake.hang();
    const error = await failure(env({ PROVIDER_TIMEOUT_MS: "150" }));
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("SendGrid did not answer within 150 ms");
  });

  it("retries when the connection is reset", async () => {
    fake.dropNext();
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toMatch(/^SendGrid could not be reached/);
  });

  it("fails permanently, naming EMAIL_PROVIDER_API_KEY, when no key is set, and sends nothing", async () => {
    const error = await failure(env({ EMAIL_PROVIDER_API_KEY: "" }));
    expect(error).toBeInstanceOf(MissingSettingError);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/^EMAIL_PROVIDER_API_KEY is not set/);
    expect(fake.requests).toHaveLength(0);
  });

  it("fails permanently, naming EMAIL_FROM, when neither the payload nor the worker has a sender", async () => {
    const error = await failure(env({ EMAIL_FROM: "" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/^EMAIL_FROM is not set/);
    expect(fake.requests).toHaveLength(0);
  });
  it("attaches a dependency's artifact in SendGrid's attachments format (base64 content, filename, type, disposition)", async () => {
    const { result } = await run(env(), attaching(), withInvoice());
    expect(result).toMatchObject({ provider: "sendgrid" });
    expect(JSON.parse(fake.lastRequest().body).attachments).toEqual([
      { content: PDF.toString("base64"), filename: "INV-4471.pdf", type: "application/pdf", disposition: "attachment" },
    ]);
  });

  it("fails permanently when an attachment names a job that is no dependency or produced no file", async () => {
    const error = await failure(env(), payload({ attachments: [{ filename: "x.pdf", job: "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a00" }] }), withInvoice());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/is not among this job's depends_on/);
    const noFile = handlerContext({ type: "send_email", dependencies: [{ id: INVOICE_JOB, type: "scripted", status: "done", result: null }] });
    expect((await failure(env(), attaching(), noFile)).message).toMatch(/produced no file/);
  });
});

describe("send_email via Resend", () => {
  let fake: ResendFake;
  beforeAll(async () => {
    fake = await startResendFake();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const env = (extra: Record<string, string> = {}) =>
    handlerDeps({
      EMAIL_PROVIDER: "resend",
      EMAIL_PROVIDER_API_KEY: RESEND_TEST_KEY,
      EMAIL_PROVIDER_BASE_URL: `${fake.url}/`,
      EMAIL_FROM: "Conveyor <noreply@conveyor.test>",
      PROVIDER_TIMEOUT_MS: "2000",
      ...extra,
    });

  it("posts /emails with the job id as Idempotency-Key and returns Resend's id", async () => {
    const deps = env();
    const { result, ctx } = await run(deps, payload());
    const request = fake.lastRequest();
    expect(request.path).toBe("/emails");
    expect(request.headers.authorization).toBe(`Bearer ${RESEND_TEST_KEY}`);
    expect(request.headers["idempotency-key"]).toBe(ctx.jobId);
    expect(request.headers["user-agent"]).toMatch(/^Conveyor-Worker\//);
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(request.body)).toEqual({ from: "Conveyor <noreply@conveyor.test>", to: ["ada@example.com"], subject: "Invoice 4471", text: BODY });
    expect(result).toEqual({ provider: "resend", message_id: fake.sent[0]!.id, to: "ada@example.com" });
    expect(ctx.lines.map((l) => l.message)).toContain(`Resend accepted message ${fake.sent[0]!.id}`);
    expectNoSecrets(deps, ctx, [RESEND_TEST_KEY, BODY]);
  });

  it("sends once when an attempt is repeated after a crash: the second answer carries the first id", async () => {
    const ctx = handlerContext();
    const first = await run(env(), payload(), ctx);
    const second = await run(env(), payload(), { ...ctx, attempt: 2 });
    expect(second.result).toEqual(first.result);
    expect(fake.sent).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("fails permanently when the same idempotency key comes with another payload (invalid_idempotent_request)", async () => {
    const ctx = handlerContext();
    await run(env(), payload(), ctx);
    const error = await failure(env(), payload({ subject: "Changed" }), ctx);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/^Resend answered 409 invalid_idempotent_request: Same idempotency key used with a different request payload/);
  });

  it("retries a 409 concurrent_idempotent_requests", async () => {
    fake.replyNext(resendError(409, "concurrent_idempotent_requests", "Same idempotency key used while original request is still in progress."));
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("Resend answered 409 concurrent_idempotent_requests: Same idempotency key used while original request is still in progress.");
  });

  it("fails permanently on Resend's 403 invalid_api_key, naming the setting", async () => {
    const error = await failure(env({ EMAIL_PROVIDER_API_KEY: "re_wrong" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("Resend answered 403 invalid_api_key: API key is invalid (check EMAIL_PROVIDER_API_KEY)");
  });

  it("fails permanently on a 422 validation_error for a malformed EMAIL_FROM", async () => {
    const error = await failure(env({ EMAIL_FROM: "Conveyor noreply at conveyor.test" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/^Resend answered 422 validation_error: Invalid `from` field/);
  });

  it("retries rate_limit_exceeded after retry-after", async () => {
    fake.replyNext({
      ...resendError(429, "rate_limit_exceeded", "Too many requests. You can only make 2 requests per second."),
      headers: { "retry-after": "2" },
    });
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect((error as RetryableJobError).retryAfterMs).toBe(2000);
  });

  it("retries daily_quota_exceeded much later (an hour without retry-after), and fails monthly_quota_exceeded", async () => {
    fake.replyNext(resendError(429, "daily_quota_exceeded", "You have reached your daily email sending quota."));
    const daily = await failure(env());
    expect(daily).toBeInstanceOf(RetryableJobError);
    expect((daily as RetryableJobError).retryAfterMs).toBe(3_600_000);

    fake.replyNext(resendError(429, "monthly_quota_exceeded", "You have reached your monthly email sending quota."));
    const monthly = await failure(env());
    expect(monthly).toBeInstanceOf(PermanentJobError);
    expect(monthly.message).toMatch(/^Resend answered 429 monthly_quota_exceeded/);
  });

  it("retries a 500 application_error", async () => {
    fake.replyNext(resendError(500, "application_error", "An unexpected error occurred."));
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("Resend answered 500 application_error: An unexpected error occurred.");
  });
  it("attaches a dependency's artifact in Resend's attachments format (filename, base64 content)", async () => {
    await run(env(), attaching(), withInvoice());
    expect(JSON.parse(fake.lastRequest().body).attachments).toEqual([
      { filename: "INV-4471.pdf", content: PDF.toString("base64"), content_type: "application/pdf" },
    ]);
    expect(fake.sent).toHaveLength(1);
  });
});

describe("send_email via Postmark", () => {
  let fake: PostmarkFake;
  beforeAll(async () => {
    fake = await startPostmarkFake({ inactiveRecipients: ["bounced@example.com"] });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const env = (extra: Record<string, string> = {}) =>
    handlerDeps({
      EMAIL_PROVIDER: "postmark",
      EMAIL_PROVIDER_API_KEY: POSTMARK_TEST_TOKEN,
      EMAIL_PROVIDER_BASE_URL: fake.url,
      EMAIL_FROM: "noreply@conveyor.test",
      PROVIDER_TIMEOUT_MS: "2000",
      ...extra,
    });

  it("posts /email with X-Postmark-Server-Token and returns the MessageID", async () => {
    const deps = env();
    const { result, ctx } = await run(deps, payload());
    const request = fake.lastRequest();
    expect(request.path).toBe("/email");
    expect(request.headers["x-postmark-server-token"]).toBe(POSTMARK_TEST_TOKEN);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers.accept).toBe("application/json");
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(request.body)).toEqual({
      From: "noreply@conveyor.test",
      To: "ada@example.com",
      Subject: "Invoice 4471",
      TextBody: BODY,
      Metadata: { conveyor_job_id: ctx.jobId },
    });
    expect(result).toEqual({ provider: "postmark", message_id: fake.sent[0]!.messageId, to: "ada@example.com" });
    expectNoSecrets(deps, ctx, [POSTMARK_TEST_TOKEN, BODY]);
  });

  it("fails permanently on 422 ErrorCode 406 for an inactive recipient", async () => {
    const error = await failure(env(), payload({ to: "bounced@example.com" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(
      /^Postmark answered 422 ErrorCode 406: You tried to send to recipient\(s\) that have been marked as inactive\..*\(the recipient bounced, complained or was suppressed\)$/,
    );
  });

  it("fails permanently on 401 ErrorCode 10 for a wrong server token", async () => {
    const error = await failure(env({ EMAIL_PROVIDER_API_KEY: "not-the-token" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(
      "Postmark answered 401 ErrorCode 10: Request does not contain a valid Server token. (check EMAIL_PROVIDER_API_KEY: a server token)",
    );
  });

  it("fails permanently on a 422 invalid email request (malformed sender)", async () => {
    const error = await failure(env({ EMAIL_FROM: "nobody" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("Postmark answered 422: ErrorCode 300: Invalid 'From' address: 'nobody'.");
  });

  it("fails permanently on a 200 whose ErrorCode is not 0", async () => {
    fake.replyNext({ status: 200, body: { ErrorCode: 405, Message: "Not allowed to send" } });
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("Postmark answered 200: ErrorCode 405: Not allowed to send");
  });

  it.each([429, 500, 503])("retries a %i", async (status) => {
    fake.replyNext(postmarkError(status, status === 429 ? 9 : 100, status === 429 ? "Rate Limit Exceeded" : "Maintenance"));
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toMatch(new RegExp(`^Postmark answered ${status}: ErrorCode`));
  });
  it("attaches a dependency's artifact in Postmark's Attachments format (Name, Content, ContentType)", async () => {
    await run(env(), attaching(), withInvoice());
    expect(JSON.parse(fake.lastRequest().body).Attachments).toEqual([
      { Name: "INV-4471.pdf", Content: PDF.toString("base64"), ContentType: "application/pdf" },
    ]);
    expect(fake.sent).toHaveLength(1);
  });
});

describe("the e-mail fakes are strict", () => {
  it("SendGrid refuses a missing Authorization header with 401 and its error body, and a form body with 415", async () => {
    const fake = await startSendGridFake();
    try {
      const unauthorised = await fetch(`${fake.url}/v3/mail/send`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: "{}",
      });
      expect(unauthorised.status).toBe(401);
      expect(await unauthorised.json()).toEqual({ errors: [{ message: "authorization required", field: null, help: null }] });

      const form = await fetch(`${fake.url}/v3/mail/send`, {
        method: "POST",
        headers: { Authorization: `Bearer ${SENDGRID_TEST_KEY}`, Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
        body: "to=a%40b.c",
      });
      expect(form.status).toBe(415);
      expect(await form.json()).toEqual({ errors: [{ message: "Content-Type should be application/json.", field: null, help: null }] });

      const empty = await fetch(`${fake.url}/v3/mail/send`, {
        method: "POST",
        headers: { Authorization: `Bearer ${SENDGRID_TEST_KEY}`, Accept: "application/json", "Content-Type": "application/json" },
        body: JSON.stringify({
          personalizations: [{ to: [{ email: "a@b.c" }] }],
          from: { email: "x@y.z" },
          subject: "s",
          content: [{ type: "text/plain", value: "" }],
        }),
      });
      expect(empty.status).toBe(400);
      expect(((await empty.json()) as any).errors).toEqual([
        { message: "The content value must be a string at least one character in length.", field: "content.0.value", help: null },
      ]);
      expect(fake.sent).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });

  it("Resend refuses a request without a key (401 missing_api_key) and one missing `to` (422 missing_required_field)", async () => {
    const fake = await startResendFake();
    try {
      const anonymous = await fetch(`${fake.url}/emails`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      expect(anonymous.status).toBe(401);
      expect(((await anonymous.json()) as any).name).toBe("missing_api_key");

      const noTo = await fetch(`${fake.url}/emails`, {
        method: "POST",
        headers: { Authorization: `Bearer ${RESEND_TEST_KEY}`, "Content-Type": "application/json" },
        body: JSON.stringify({ from: "a@b.c", subject: "s", text: "t" }),
      });
      expect(noTo.status).toBe(422);
      expect(await noTo.json()).toEqual({ statusCode: 422, name: "missing_required_field", message: "Missing `to` field." });
      expect(fake.sent).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });

  it("Postmark refuses a message without From (422 ErrorCode 300) and a request without Accept: application/json (ErrorCode 409)", async () => {
    const fake = await startPostmarkFake();
    const headers = { "X-Postmark-Server-Token": POSTMARK_TEST_TOKEN, "Content-Type": "application/json" };
    try {
      const noFrom = await fetch(`${fake.url}/email`, {
        method: "POST",
        headers: { ...headers, Accept: "application/json" },
        body: JSON.stringify({ To: "a@b.c", Subject: "s", TextBody: "t" }),
      });
      expect(noFrom.status).toBe(422);
      expect(((await noFrom.json()) as any).ErrorCode).toBe(300);

      const noAccept = await fetch(`${fake.url}/email`, {
        method: "POST",
        headers: { ...headers, Accept: "text/html" },
        body: JSON.stringify({ From: "x@y.z", To: "a@b.c", Subject: "s", TextBody: "t" }),
      });
      expect(noAccept.status).toBe(422);
      expect(((await noAccept.json()) as any).ErrorCode).toBe(409);
      expect(fake.sent).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });
});
