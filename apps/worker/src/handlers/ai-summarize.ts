// ai_summarize: a summary of `text` from an OpenAI-compatible Chat Completions model (OPENAI_BASE_URL, OPENAI_MODEL),
// streamed: the job's output (ctx.output) shows the summary as the model writes it.
import { PermanentJobError, type AiSummarizePayload, type JobHandler } from "@conveyor/contracts";
import OpenAI from "openai";
import { classifyOpenAIError } from "./ai/openai-errors";
import { summaryMessages } from "./ai/prompt";
import { requireSetting } from "./settings";
import type { HandlerDeps } from "./types";

export function aiSummarizeHandler({ settings, logger }: HandlerDeps): JobHandler<AiSummarizePayload> {
  // One client per worker, created on first use: it keeps the connection pool between jobs.
  let client: OpenAI | undefined;

  return async (payload, ctx) => {
    const apiKey = requireSetting(settings.OPENAI_API_KEY, "OPENAI_API_KEY");
    const { OPENAI_MODEL: model, OPENAI_BASE_URL: baseUrl, PROVIDER_TIMEOUT_MS: timeoutMs } = settings;
    client ??= new OpenAI({
      apiKey,
      baseURL: baseUrl,
      // The job runtime retries with its own backoff; two stacked retry layers would multiply the attempts.
      maxRetries: 0,
      // Backstop only: the deadline below fires first (see there).
      timeout: timeoutMs + 1_000,
      // Only our settings decide what is sent: no OPENAI_ORG_ID/OPENAI_PROJECT_ID picked up from the environment.
      organization: null,
      project: null,
      logger,
      logLevel: "warn",
    });

    ctx.log("info", `Summarizing ${payload.text.length} characters with ${model} (${payload.length}) at ${new URL(baseUrl).host}`);
    // The deadline is our own signal, so a timeout is told apart from a shutdown by which signal fired, not by
    // the SDK recognising its fetch's abort error (it cannot when the error comes from another realm).
    const deadline = AbortSignal.timeout(timeoutMs);
    // Streamed (docs/reference/events.md#progress-and-live-results): each piece of the summary goes to the job's output as the model writes it.
    let summaryText = "";
    let refusal = "";
    let finishReason: string | null = null;
    let answeredBy = "";
    let reportedUsage: OpenAI.CompletionUsage | undefined;
    try {
      const stream = await client.chat.completions.create(
        { model, messages: summaryMessages(payload.text, payload.length), stream: true, stream_options: { include_usage: true } },
        { signal: AbortSignal.any([ctx.signal, deadline]) },
      );
      for await (const chunk of stream) {
        answeredBy ||= chunk.model;
        reportedUsage = chunk.usage ?? reportedUsage;
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        finishReason = choice.finish_reason ?? finishReason;
        if (choice.delta?.refusal) refusal += choice.delta.refusal;
        const piece = choice.delta?.content;
        if (piece) {
          // The first piece without the blank the model may start with, as the summary is trimmed.
          const shown = summaryText.trim() ? piece : piece.trimStart();
          summaryText += piece;
          if (shown) ctx.output(shown);
        }
      }
    } catch (error) {
      throw classifyOpenAIError(error, { timeoutMs, apiKey, timedOut: deadline.aborted && !ctx.signal.aborted });
    }

    if (finishReason === "content_filter") {
      throw new PermanentJobError(
        `OpenAI withheld the summary: its content filter flagged the text or the output (finish_reason content_filter, model ${answeredBy || model})`,
      );
    }
    if (refusal) throw new PermanentJobError(`OpenAI's model refused to summarize: ${refusal.replace(/\s+/g, " ").slice(0, 200)}`);
    const summary = summaryText.trim();
    if (!summary) {
      throw new PermanentJobError(`OpenAI returned an empty summary (finish_reason ${finishReason ?? "none"}, model ${answeredBy || model})`);
    }
    if (finishReason === "length") ctx.log("warn", "The summary was cut off at the model's output limit");
    const completion = { model: answeredBy, usage: reportedUsage };

    const usage = { prompt_tokens: completion.usage?.prompt_tokens ?? null, completion_tokens: completion.usage?.completion_tokens ?? null };
    ctx.log(
      "info",
      `${completion.model || model} returned a ${summary.length}-character summary (${usage.prompt_tokens ?? "?"} prompt tokens, ${usage.completion_tokens ?? "?"} completion tokens)`,
    );
    return { summary, model: completion.model || model, usage };
  };
}
