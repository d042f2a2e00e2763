// Provider callbacks. No user credential: POST /callbacks/mpesa/{job_id}?secret=… is authenticated by the
// per-push secret Conveyor put in the STK push's CallBackURL (the token of the push's callback waitpoint). The
// secret stays in the query string, which the access log never writes.
import { endpoint } from "../declarations/endpoint";
import { callbackBody, recordMpesaCallback } from "../services/callbacks";

export const callbackEndpoints = [
  endpoint({
    method: "post",
    path: "/callbacks/mpesa/:job_id",
    operationId: "mpesaCallback",
    tag: "Callbacks",
    summary: "M-Pesa STK push result (called by Safaricom)",
    description:
      "Safaricom posts the outcome of a mobile_money_stk job's payment prompt here. Authenticated by the per-job `secret` " +
      "Conveyor put in the push's CallBackURL; an unknown job, a wrong secret, another push's CheckoutRequestID or a push whose " +
      "callback waitpoint expired is 404. Completes the push's callback waitpoint once (the job, waiting on it, ends with " +
      "`result.callback` and a log line); repeats are accepted and ignored.",
    access: "public",
    params: { job_id: { description: "The mobile_money_stk job.", schema: { type: "string", format: "uuid" } } },
    query: [{ name: "secret", in: "query", required: true, description: "The per-job secret from the CallBackURL.", schema: { type: "string" } }],
    // The body is checked by the service, after the secret: an unknown caller learns nothing from a 400.
    body: {
      schema: callbackBody,
      unchecked: true,
      examples: {
        paid: {
          summary: "The subscriber paid",
          value: {
            Body: {
              stkCallback: {
                MerchantRequestID: "29115-34620561-1",
                CheckoutRequestID: "ws_CO_191220191020363925",
                ResultCode: 0,
                ResultDesc: "The service request is processed successfully.",
                CallbackMetadata: {
                  Item: [
                    { Name: "Amount", Value: 100 },
                    { Name: "MpesaReceiptNumber", Value: "NLJ7RT61SV" },
                    { Name: "TransactionDate", Value: 20191219102115 },
                    { Name: "PhoneNumber", Value: 254712345678 },
                  ],
                },
              },
            },
          },
        },
        cancelled: {
          summary: "The subscriber cancelled",
          value: {
            Body: {
              stkCallback: {
                MerchantRequestID: "29115-34620561-1",
                CheckoutRequestID: "ws_CO_191220191020363925",
                ResultCode: 1032,
                ResultDesc: "Request cancelled by user",
              },
            },
          },
        },
      },
    },
    responses: { 200: { description: "Recorded (or a repeat).", json: { component: "CallbackAccepted", example: { ResultCode: 0, ResultDesc: "Accepted" } } } },
    errors: [400, 404, 413, 415, 500, 503],
    async handle({ params, body, req }, deps) {
      const secret = typeof req.query.secret === "string" ? req.query.secret : undefined;
      await recordMpesaCallback({ jobId: params.job_id, secret, body }, deps);
      // What Safaricom's C2B callbacks expect; harmless for STK callbacks.
      return { json: { ResultCode: 0, ResultDesc: "Accepted" } };
    },
  }),
];
