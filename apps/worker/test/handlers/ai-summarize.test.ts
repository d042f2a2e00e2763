// ai_summarize through the real openai SDK against a strict local fake of Chat Completions: the request, the
// result, each SDK error class mapped to retry or give up, timeouts, aborts, and no key or text in logs.
import { PermanentJobError, RetryableJobError, type AiSummarizePayload } from "@conveyor/contracts";
import { APIUserAbortError } from "openai";
import { aiSummarizeHandler } from "../../src/handlers/ai-summarize";
import { MissingSettingError } from "../../src/handlers/settings";
import { handlerDeps, type TestDeps } from "../fakes/handler-deps";
import { completionBody, OPENAI_TEST_KEY, openaiError, startOpenAIFake, streamedCompletion, type OpenAIFake } from "@conveyor/testkit/fakes";
import { failureOf, handlerContext, type RecordedContext } from "../support/handler-context";

const TEXT =
  "Acme's third-quarter revenue rose 12% to 4.1 million euros. The growth came from the new Nairobi office. " +
  "Costs were flat. The board approved a dividend of 0.30 euros per share, payable in November.";
const payload = (overrides: Partial<AiSummarizePayload> = {}): AiSummarizePayload => ({ text: TEXT, length: "medium", ...overrides });

const failure = (deps: TestDeps, p: AiSummarizePayload = payload(), ctx: RecordedContext = handlerContext({ type: "ai_summarize" })) =>
  failureOf(() => aiSummarizeHandler(deps)(p, ctx));

describe("ai_summarize via the openai SDK", () => {
  let fake: OpenAIFake;
  beforeAll(async () => {
    fake = await startOpenAIFake({ models: ["gpt-4o-mini", "llama3.1:8b"] });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const env = (extra: Record<string, string> = {}) =>
    handlerDeps({ OPENAI_API_KEY: OPENAI_TEST_KEY, OPENAI_BASE_URL: fake.baseUrl, PROVIDER_TIMEOUT_MS: "2000", ...extra });

  it("asks Chat Completions for a summary of the text and returns it with the model and token usage", async () => {
    const deps = env();
    const ctx = handlerContext({ type: "ai_summarize" });
    const result = await aiSummarizeHandler(deps)(payload(), ctx);

    const request = fake.lastRequest();
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe(`Bearer ${OPENAI_TEST_KEY}`);
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(request.headers["x-stainless-retry-count"]).toBe("0");
    expect(request.headers["openai-organization"]).toBeUndefined();
    const body = JSON.parse(request.body);
    // Streamed, with the usage in the last chunk (docs/reference/events.md#progress-and-live-results: the summary appears in the job's output as it is written).
    expect(Object.keys(body).sort()).toEqual(["messages", "model", "stream", "stream_options"]);
    expect([body.stream, body.stream_options]).toEqual([true, { include_usage: true }]);
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.messages).toHaveLength(2);
    expect(body.messages[0].role).toBe("system");
    expect(body.messages[0].content).toContain("in three to five sentences");
    expect(body.messages[1]).toEqual({ role: "user", content: TEXT });

    expect(result).toEqual({
      summary: "Acme's third-quarter revenue rose 12% to 4.1 million euros.",
      model: "gpt-4o-mini",
      usage: { prompt_tokens: expect.any(Number), completion_tokens: 15 },
    });
    // Token by token: several pieces, which together are the summary.
    expect(ctx.outputChunks.length).toBeGreaterThan(3);
    expect(ctx.outputChunks.join("")).toBe("Acme's third-quarter revenue rose 12% to 4.1 million euros.");
    expect(ctx.lines.map((l) => l.message)).toEqual([
      `Summarizing ${TEXT.length} characters with gpt-4o-mini (medium) at ${new URL(fake.url).host}`,
      expect.stringMatching(/^gpt-4o-mini returned a 59-character summary \(\d+ prompt tokens, 15 completion tokens\)$/),
    ]);
    const everything = [...ctx.lines.map((l) => l.message), ...deps.processOutput].join("\n");
    expect(everything).not.toContain(OPENAI_TEST_KEY);
    expect(everything).not.toContain(TEXT.slice(0, 40));
  });

  it.each([
    ["short", "in one or two sentences"],
    ["long", "in eight to twelve sentences"],
  ] as const)("shapes the prompt for length %s", async (length, target) => {
    await aiSummarizeHandler(env())(payload({ length }), handlerContext());
    expect(JSON.parse(fake.lastRequest().body).messages[0].content).toContain(target);
  });

  it("uses OPENAI_MODEL with any OpenAI-compatible server", async () => {
    const result = await aiSummarizeHandler(env({ OPENAI_MODEL: "llama3.1:8b" }))(payload(), handlerContext());
    expect(JSON.parse(fake.lastRequest().body).model).toBe("llama3.1:8b");
    expect(result).toMatchObject({ model: "llama3.1:8b" });
  });

  it("fails permanently on 401 without repeating any part of the refused key", async () => {
    const wrongKey = "sk-wrong-key-abcdefghijklmnop-WXYZ";
    const deps = env({ OPENAI_API_KEY: wrongKey });
    const ctx = handlerContext();
    const error = (await failure(deps, payload(), ctx)) as Error;
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("OpenAI answered 401 invalid_api_key: the API key was refused (check OPENAI_API_KEY)");
    const everything = [error.message, ...ctx.lines.map((l) => l.message), ...deps.processOutput].join("\n");
    expect(everything).not.toContain("WXYZ");
  });

  it("fails permanently on 404 model_not_found for an unknown OPENAI_MODEL", async () => {
    const error = (await failure(env({ OPENAI_MODEL: "gpt-unknown" }))) as Error;
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("OpenAI answered 404 model_not_found: The model `gpt-unknown` does not exist or you do not have access to it.");
  });

  it.each([
    [400, "context_length_exceeded", "This model's maximum context length is 128000 tokens."],
    [403, "unsupported_country_region_territory", "Country, region, or territory not supported"],
    [422, null, "Unprocessable entity"],
  ])("fails permanently on %i", async (status, code, message) => {
    fake.replyNext(openaiError(status, message, { code }));
    const error = (await failure(env())) as Error;
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(`OpenAI answered ${status} ${code ?? "invalid_request_error"}: ${message}`);
  });

  it("fails permanently on 429 insufficient_quota", async () => {
    fake.replyNext(
      openaiError(429, "You exceeded your current quota, please check your plan and billing details.", {
        type: "insufficient_quota",
        code: "insufficient_quota",
      }),
    );
    const error = (await failure(env())) as Error;
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(
      "OpenAI answered 429 insufficient_quota: You exceeded your current quota, please check your plan and billing details. (billing quota exhausted)",
    );
  });

  it("retries a rate-limit 429 after retry-after-ms, or retry-after", async () => {
    fake.replyNext(openaiError(429, "Rate limit reached for gpt-4o-mini.", { type: "requests", code: "rate_limit_exceeded" }, { "retry-after-ms": "1500" }));
    const first = (await failure(env())) as RetryableJobError;
    expect(first).toBeInstanceOf(RetryableJobError);
    expect(first.retryAfterMs).toBe(1500);

    fake.replyNext(openaiError(429, "Rate limit reached for gpt-4o-mini.", { type: "requests", code: "rate_limit_exceeded" }, { "retry-after": "20" }));
    const second = (await failure(env())) as RetryableJobError;
    expect(second.retryAfterMs).toBe(20_000);
    expect(second.message).toBe("OpenAI answered 429 rate_limit_exceeded: Rate limit reached for gpt-4o-mini.");
  });

  it.each([408, 409, 500, 503])("retries a %i once, at the job level (the SDK itself does not retry)", async (status) => {
    fake.replyNext(openaiError(status, "The server had an error while processing your request.", { type: "server_error" }));
    const error = (await failure(env())) as Error;
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(fake.requests).toHaveLength(1);
  });

  it("retries when the server does not answer within PROVIDER_TIMEOUT_MS", async () => {
    fake.hang();
    const error = (await failure(env({ PROVIDER_TIMEOUT_MS: "150" }))) as Error;
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("OpenAI did not answer within 150 ms");
    expect(fake.requests).toHaveLength(1);
  });

  it("retries when the server cannot be reached", async () => {
    const gone = await startOpenAIFake();
    const baseUrl = gone.baseUrl;
    await gone.close();
    const error = (await failure(env({ OPENAI_BASE_URL: baseUrl }))) as Error;
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("OpenAI could not be reached (ECONNREFUSED)");
  });

  it("gives the runtime's abort back untouched when the job's signal fires", async () => {
    fake.hang();
    const ctx = handlerContext();
    const pending = failure(env({ PROVIDER_TIMEOUT_MS: "60000" }), payload(), ctx);
    await fake.waitForRequests(1);
    ctx.abort("worker shutting down");
    const error = await pending;
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error).not.toBeInstanceOf(RetryableJobError);
    expect(error).not.toBeInstanceOf(PermanentJobError);
  });

  it("fails permanently with a clear message when the content filter withholds the summary", async () => {
    fake.replyNext(streamedCompletion(completionBody({ model: "gpt-4o-mini", content: null, finishReason: "content_filter" })));
    const error = (await failure(env())) as Error;
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(
      "OpenAI withheld the summary: its content filter flagged the text or the output (finish_reason content_filter, model gpt-4o-mini)",
    );
  });

  it("fails permanently on an empty answer or a refusal", async () => {
    fake.replyNext(streamedCompletion(completionBody({ model: "gpt-4o-mini", content: "  " })));
    const empty = (await failure(env())) as Error;
    expect(empty).toBeInstanceOf(PermanentJobError);
    expect(empty.message).toBe("OpenAI returned an empty summary (finish_reason stop, model gpt-4o-mini)");

    fake.replyNext(streamedCompletion(completionBody({ model: "gpt-4o-mini", content: null, refusal: "I can't help with that." })));
    const refused = (await failure(env())) as Error;
    expect(refused).toBeInstanceOf(PermanentJobError);
    expect(refused.message).toBe("OpenAI's model refused to summarize: I can't help with that.");
  });

  it("fails permanently, naming OPENAI_API_KEY, when it is not set", async () => {
    const error = (await failure(env({ OPENAI_API_KEY: "" }))) as Error;
    expect(error).toBeInstanceOf(MissingSettingError);
    expect(error.message).toMatch(/^OPENAI_API_KEY is not set/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("the OpenAI fake is strict", () => {
  it("refuses a request without a key (401 envelope) and one without messages (400 missing_required_parameter)", async () => {
    const fake = await startOpenAIFake();
    try {
      const anonymous = await fetch(`${fake.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }),
      });
      expect(anonymous.status).toBe(401);
      expect(((await anonymous.json()) as any).error).toMatchObject({ type: "invalid_request_error", code: null });

      const noMessages = await fetch(`${fake.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${fake.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini" }),
      });
      expect(noMessages.status).toBe(400);
      expect(((await noMessages.json()) as any).error).toEqual({
        message: "Missing required parameter: 'messages'.",
        type: "invalid_request_error",
        param: "messages",
        code: "missing_required_parameter",
      });
      expect(fake.completions).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });
});
