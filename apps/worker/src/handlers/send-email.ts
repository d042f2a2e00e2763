// send_email: one plain-text e-mail through the provider EMAIL_PROVIDER names (SendGrid by default).
import { EMAIL_ATTACHMENTS_MAX_BYTES, PermanentJobError, type JobContext, type JobHandler, type SendEmailPayload } from "@conveyor/contracts";
import type { EmailAttachment } from "./email/types";
import { maskEmail, parseMailbox } from "./email/address";
import { emailProviders } from "./email";
import { requireSetting } from "./settings";
import type { HandlerDeps } from "./types";

export function sendEmailHandler({ settings }: HandlerDeps): JobHandler<SendEmailPayload> {
  return async (payload, ctx) => {
    const provider = emailProviders[settings.EMAIL_PROVIDER];
    const apiKey = requireSetting(settings.EMAIL_PROVIDER_API_KEY, "EMAIL_PROVIDER_API_KEY");
    const from = requireSetting(payload.from ?? settings.EMAIL_FROM, "EMAIL_FROM");
    const baseUrl = (settings.EMAIL_PROVIDER_BASE_URL ?? provider.defaultBaseUrl).replace(/\/+$/, "");

    const attachments = await attachmentsOf(payload, ctx);
    const attached = attachments.length ? ` with ${attachments.length} attachment(s) (${attachments.reduce((n, a) => n + a.data.length, 0)} bytes)` : "";
    ctx.log("info", `Sending via ${provider.name} to ${maskEmail(payload.to)} from ${parseMailbox(from).email}${attached}`);
    const { messageId } = await provider.send(
      { to: payload.to, from, subject: payload.subject, text: payload.body, jobId: ctx.jobId, attachments },
      { apiKey, baseUrl, timeoutMs: settings.PROVIDER_TIMEOUT_MS, signal: ctx.signal },
    );
    if (messageId) ctx.log("info", `${provider.name} accepted message ${messageId}`);
    else ctx.log("warn", `${provider.name} accepted the message without returning a message id`);
    return { provider: settings.EMAIL_PROVIDER, message_id: messageId, to: payload.to };
  };
}

/**
 * The files `attachments` names (docs/reference/lifecycle.md#dependencies): each the artifact of a job this one depends on, which is final by now.
 * A dependency without an artifact (it failed, or produces none) or too many bytes in all cannot be fixed by a retry.
 */
async function attachmentsOf(payload: SendEmailPayload, ctx: JobContext): Promise<EmailAttachment[]> {
  const files: EmailAttachment[] = [];
  let bytes = 0;
  for (const attachment of payload.attachments ?? []) {
    const artifact = await ctx.dependencyArtifact(attachment.job);
    if (!artifact) {
      const dependency = ctx.dependencies.find((d) => d.id === attachment.job);
      throw new PermanentJobError(
        dependency
          ? `attachment ${attachment.filename}: job ${attachment.job} (${dependency.type}, ${dependency.status}) produced no file`
          : `attachment ${attachment.filename}: job ${attachment.job} is not among this job's depends_on`,
      );
    }
    bytes += artifact.data.length;
    if (bytes > EMAIL_ATTACHMENTS_MAX_BYTES) throw new PermanentJobError(`the attachments exceed ${EMAIL_ATTACHMENTS_MAX_BYTES / 1024 / 1024} MiB in all`);
    files.push({ filename: attachment.filename, contentType: artifact.contentType, data: artifact.data });
  }
  return files;
}
