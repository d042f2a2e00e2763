// The built-in handlers, one per catalog entry. The map's type comes from the catalog, so a built-in type
// without a handler does not compile.
import type { BuiltInType, JobHandler, Payloads } from "@conveyor/contracts";
import { aiSummarizeHandler } from "./ai-summarize";
import { chatNotifyHandler } from "./chat-notify";
import { compressImageHandler } from "./compress-image";
import { generatePdfHandler } from "./generate-pdf";
import { mobileMoneyStkHandler } from "./mobile-money-stk";
import { sendEmailHandler } from "./send-email";
import { sendSmsHandler } from "./send-sms";
import type { HandlerDeps } from "./types";
import { webhookHandler } from "./webhook";

export type { HandlerDeps } from "./types";
export type BuiltInHandlers = { [K in BuiltInType]: JobHandler<Payloads[K]> };

export type HandlerSet = {
  handlers: BuiltInHandlers;
  /** Releases shared resources (the PDF browser). */
  close(): Promise<void>;
};

export function createBuiltInHandlers(deps: HandlerDeps): HandlerSet {
  const pdf = generatePdfHandler(deps);
  return {
    handlers: {
      send_email: sendEmailHandler(deps),
      send_sms: sendSmsHandler(deps),
      webhook: webhookHandler(deps),
      generate_pdf: pdf.handle,
      compress_image: compressImageHandler(deps),
      ai_summarize: aiSummarizeHandler(deps),
      mobile_money_stk: mobileMoneyStkHandler(deps),
      chat_notify: chatNotifyHandler(deps),
    },
    close: () => pdf.close(),
  };
}
