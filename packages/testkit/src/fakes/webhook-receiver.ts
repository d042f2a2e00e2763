// A webhook receiver for tests: the shared fake server answering 200 to every POST, plus the receiving-side
// check a customer would run, with the `standardwebhooks` reference library.
import { Webhook } from "standardwebhooks";
import { headerValue, startFakeServer, type FakeServer, type RecordedRequest } from "./fake-server";

export function startWebhookReceiver(): Promise<FakeServer> {
  return startFakeServer({ answer: () => ({ status: 200, body: { received: true } }) });
}

/** The payload as the reference library verifies it (throws WebhookVerificationError when the signature is wrong). */
export function verifyDelivery(secret: string, request: RecordedRequest): unknown {
  const headers = {
    "webhook-id": headerValue(request, "webhook-id") ?? "",
    "webhook-timestamp": headerValue(request, "webhook-timestamp") ?? "",
    "webhook-signature": headerValue(request, "webhook-signature") ?? "",
  };
  return new Webhook(secret).verify(request.body, headers);
}
