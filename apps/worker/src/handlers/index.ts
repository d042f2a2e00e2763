// The built-in handlers, one per catalog entry. The registry's type comes from the catalog, so a built-in
// type without a handler does not compile. A handler's module (and its heavy dependencies: Chromium driver,
// image codecs, the OpenAI SDK) is loaded only when this worker serves its type.
/* eslint-disable @typescript-eslint/no-require-imports -- require() in each factory is what defers loading a handler's module */
import { WEBHOOK_DELIVERY_TYPE, type BuiltInType, type JobHandler, type Payloads } from "@conveyor/contracts";
import type { HandlerDeps } from "./types";
import { webhookDeliveryHandler, type DeliveryHandler, type WebhookDeliveryDeps } from "./webhook-delivery";

export type { HandlerDeps } from "./types";
export type BuiltInHandlers = { [K in BuiltInType]: JobHandler<Payloads[K]> };

type Loaded<K extends BuiltInType> = { handle: JobHandler<Payloads[K]>; close?(): Promise<void> };
type Registry = { [K in BuiltInType]: (deps: HandlerDeps) => Loaded<K> };

const registry: Registry = {
  send_email: (deps) => ({ handle: (require("./send-email") as typeof import("./send-email")).sendEmailHandler(deps) }),
  send_sms: (deps) => ({ handle: (require("./send-sms") as typeof import("./send-sms")).sendSmsHandler(deps) }),
  webhook: (deps) => ({ handle: (require("./webhook") as typeof import("./webhook")).webhookHandler(deps) }),
  generate_pdf: (deps) => (require("./generate-pdf") as typeof import("./generate-pdf")).generatePdfHandler(deps),
  compress_image: (deps) => ({ handle: (require("./compress-image") as typeof import("./compress-image")).compressImageHandler(deps) }),
  ai_summarize: (deps) => ({ handle: (require("./ai-summarize") as typeof import("./ai-summarize")).aiSummarizeHandler(deps) }),
  mobile_money_stk: (deps) => ({ handle: (require("./mobile-money-stk") as typeof import("./mobile-money-stk")).mobileMoneyStkHandler(deps) }),
  chat_notify: (deps) => ({ handle: (require("./chat-notify") as typeof import("./chat-notify")).chatNotifyHandler(deps) }),
};

export type HandlerSet = {
  /** Handlers of the served built-in types. */
  handlers: Partial<BuiltInHandlers>;
  /** Releases shared resources (the PDF browser). */
  close(): Promise<void>;
};

/** Creates the handlers of `types` (the built-in types this worker serves). */
export function createBuiltInHandlers(deps: HandlerDeps, types: readonly BuiltInType[]): HandlerSet {
  const handlers: Partial<BuiltInHandlers> = {};
  const closers: (() => Promise<void>)[] = [];
  for (const type of types) {
    const loaded = (registry[type] as (d: HandlerDeps) => Loaded<typeof type>)(deps);
    (handlers as Record<string, unknown>)[type] = loaded.handle;
    if (loaded.close) closers.push(() => loaded.close!());
  }
  return { handlers, close: async () => void (await Promise.all(closers.map((close) => close()))) };
}

/** Handlers of Conveyor's own job types (never created by users): webhook deliveries. */
export function createInternalHandlers(deps: WebhookDeliveryDeps): { type: string; run: DeliveryHandler }[] {
  return [{ type: WEBHOOK_DELIVERY_TYPE, run: webhookDeliveryHandler(deps) }];
}
