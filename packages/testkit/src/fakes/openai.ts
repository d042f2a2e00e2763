// OpenAI Chat Completions (docs/reference/providers.md#openai): POST /v1/chat/completions with a Bearer key; JSON in and out, or
// server-sent chunks with `"stream": true`.
// Errors use OpenAI's envelope `{"error":{message,type,param,code}}` so the openai SDK builds its real error
// classes (AuthenticationError, NotFoundError, RateLimitError, …).
import { randomBytes } from "node:crypto";
import { headerValue, mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export const OPENAI_TEST_KEY = "sk-fake-openai-key-conveyor-tests-0123456789";

export type ChatCompletionCall = { body: any };
export type OpenAIFake = FakeServer & {
  /** Base URL to give the SDK (…/v1). */
  baseUrl: string;
  apiKey: string;
  completions: ChatCompletionCall[];
  /** Models the key may use; others are 404 model_not_found. */
  models: Set<string>;
};

export function openaiError(
  status: number,
  message: string,
  extra: { type?: string; param?: string | null; code?: string | null } = {},
  headers?: Record<string, string>,
): FakeReply {
  return {
    status,
    body: { error: { message, type: extra.type ?? "invalid_request_error", param: extra.param ?? null, code: extra.code ?? null } },
    headers: { "x-request-id": requestId(), ...headers },
  };
}

/** A 200 completion body, for tests that script unusual answers (content_filter, empty content). */
export function completionBody(options: {
  model: string;
  content: string | null;
  finishReason?: string;
  refusal?: string | null;
  usage?: { prompt_tokens: number; completion_tokens: number };
}) {
  const usage = options.usage ?? { prompt_tokens: 10, completion_tokens: tokens(options.content ?? "") };
  return {
    id: `chatcmpl-${randomBytes(12).toString("base64url")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: options.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: options.content, refusal: options.refusal ?? null },
        logprobs: null,
        finish_reason: options.finishReason ?? "stop",
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    system_fingerprint: "fp_fake",
  };
}

/**
 * A completion body as the real API streams it for `"stream": true` (docs/reference/providers.md#openai): `data:` lines of
 * chat.completion.chunk objects — the role first, then the content a few characters at a time (or the refusal), then
 * the finish reason, the usage when `include_usage` was asked for — and `data: [DONE]`, `pauseMs` apart.
 */
export function streamedCompletion(completion: ReturnType<typeof completionBody>, options: { includeUsage?: boolean; pauseMs?: number } = {}): FakeReply {
  const choice = completion.choices[0]!;
  const base = { id: completion.id, object: "chat.completion.chunk", created: completion.created, model: completion.model, system_fingerprint: "fp_fake" };
  const chunk = (delta: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const pieces = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const token of (choice.message.content ?? "").match(/\s*\S+|\s+$/g) ?? []) pieces.push(chunk({ content: token }));
  if (choice.message.refusal) pieces.push(chunk({ refusal: choice.message.refusal }));
  pieces.push(chunk({}, choice.finish_reason));
  const lines = pieces.map((p) => `data: ${JSON.stringify(p)}\n\n`);
  if (options.includeUsage) lines.push(`data: ${JSON.stringify({ ...base, choices: [], usage: completion.usage })}\n\n`);
  lines.push("data: [DONE]\n\n");
  return {
    status: 200,
    headers: { "Content-Type": "text/event-stream; charset=utf-8", "x-request-id": requestId() },
    stream: { pieces: lines, pauseMs: options.pauseMs ?? 15 },
  };
}

export async function startOpenAIFake(options: { apiKey?: string; models?: string[]; reply?: (body: any) => string } = {}): Promise<OpenAIFake> {
  const apiKey = options.apiKey ?? OPENAI_TEST_KEY;
  const models = new Set(options.models ?? ["gpt-4o-mini"]);
  const completions: ChatCompletionCall[] = [];
  const reply = options.reply ?? firstSentenceOfUserText;
  const server = await startFakeServer({
    refuse: (request) => refusal(request, apiKey, models),
    reset: () => {
      completions.length = 0;
    },
    answer: (request) => {
      const body = JSON.parse(request.body);
      completions.push({ body });
      const content = reply(body);
      const prompt = body.messages.map((m: any) => String(m.content ?? "")).join("\n");
      const completion = completionBody({ model: body.model, content, usage: { prompt_tokens: tokens(prompt), completion_tokens: tokens(content) } });
      if (body.stream === true) return streamedCompletion(completion, { includeUsage: body.stream_options?.include_usage === true });
      return { status: 200, headers: { "x-request-id": requestId() }, body: completion };
    },
  });
  return Object.assign(server, { baseUrl: `${server.url}/v1`, apiKey, completions, models });
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

function refusal(request: RecordedRequest, apiKey: string, models: Set<string>): FakeReply | undefined {
  if (request.path !== "/v1/chat/completions") return openaiError(404, `Invalid URL (${request.method} ${request.path})`);
  if (request.method !== "POST") return openaiError(405, `Invalid method for URL (${request.method} ${request.path})`);
  const auth = headerValue(request, "authorization");
  if (!auth?.startsWith("Bearer ")) {
    return openaiError(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    );
  }
  const given = auth.slice("Bearer ".length);
  if (given !== apiKey) {
    // OpenAI shows a masked form of the refused key; a client must not echo even that carelessly.
    return openaiError(
      401,
      `Incorrect API key provided: ${given.slice(0, 3)}${"*".repeat(Math.max(0, given.length - 7))}${given.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      { code: "invalid_api_key" },
    );
  }
  const parsed = mediaType(request) === "application/json" ? parseJson(request.body) : { ok: false as const };
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) {
    return openaiError(400, "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.");
  }
  const body = parsed.value as any;
  if (typeof body.model !== "string" || body.model === "") return openaiError(400, "you must provide a model parameter");
  if (body.messages === undefined)
    return openaiError(400, "Missing required parameter: 'messages'.", { param: "messages", code: "missing_required_parameter" });
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return openaiError(400, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", {
      param: "messages",
      code: "empty_array",
    });
  }
  const bad = body.messages.findIndex((m: any) => !ROLES.has(m?.role) || (typeof m.content !== "string" && !Array.isArray(m.content)));
  if (bad >= 0) return openaiError(400, `Invalid value for 'messages[${bad}]'.`, { param: `messages[${bad}]`, code: "invalid_value" });
  if (!models.has(body.model)) {
    return openaiError(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, { code: "model_not_found" });
  }
  return undefined;
}

function firstSentenceOfUserText(body: any): string {
  const user = [...body.messages].reverse().find((m: any) => m.role === "user");
  const text = String(user?.content ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return (text.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? text).slice(0, 200);
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
const requestId = () => `req_${randomBytes(16).toString("hex")}`;
