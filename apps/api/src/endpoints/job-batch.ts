// Enqueueing up to 1,000 jobs at once (POST /jobs/batch, docs/reference/lifecycle.md#lifecycle, docs/reference/lifecycle.md#dependencies, docs/reference/lifecycle.md#waitpoints-and-durable-steps): independent jobs, or a whole dependency
// graph, with the waitpoints it waits on.
import { BATCH_LIMIT } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { validationFailed } from "../services/infrastructure/errors";
import { payloadExamples } from "../openapi/job-types";
import { jsonSchema, ref, withProperty } from "../declarations/json-schema";
import { createJobs } from "../services/job-batch";
import { JOB_ID } from "./job-examples";
import { batchInput } from "../declarations/job-fields";
import { waitpointExample } from "./waitpoints";

export const jobBatchEndpoints = [
  endpoint({
    method: "post",
    path: "/jobs/batch",
    operationId: "createJobs",
    tag: "Jobs",
    summary: "Enqueue up to 1,000 jobs at once",
    description:
      `All or nothing: if any job is invalid, none is stored and the details name each bad path (jobs.3.payload.to). At most ${BATCH_LIMIT} jobs; no Idempotency-Key. ` +
      "A whole graph of dependencies (docs/reference/lifecycle.md#dependencies) is one batch: an item may carry a `ref` (unique in the batch) and `depends_on` " +
      "mixing job ids and refs of earlier or later items. A cycle, a job depending on itself, an unknown ref or a job id that is " +
      "not your organization's is a 400 naming the items. The answer repeats each item's ref beside its id. " +
      "`waitpoints` (docs/reference/lifecycle.md#waitpoints-and-durable-steps) are made in the same transaction, for the jobs to wait on by ref (an approval graph in one request); " +
      "refs are unique across jobs and waitpoints. The answer lists them after the jobs, with `kind: waitpoint` and their " +
      "`complete_url`, shown only here.",
    access: "job",
    body: {
      schema: batchInput,
      document: withProperty(jsonSchema(batchInput), "jobs.[]", ref("NewJob")),
      examples: {
        two: {
          summary: "An e-mail and a webhook",
          value: {
            jobs: [
              { type: "send_email", payload: payloadExamples.send_email },
              { type: "webhook", payload: payloadExamples.webhook, max_retries: 5 },
            ],
          },
        },
        invoiceThenEmail: {
          summary: "An invoice rendered, then e-mailed with the PDF attached (a graph: refs and depends_on)",
          value: {
            jobs: [
              { ref: "invoice", type: "generate_pdf", payload: payloadExamples.generate_pdf },
              {
                ref: "email",
                type: "send_email",
                depends_on: ["invoice"],
                payload: { ...payloadExamples.send_email, attachments: [{ filename: "invoice.pdf", job: "invoice" }] },
              },
            ],
          },
        },
        approvalGraph: {
          summary: "An invoice e-mailed once a person approves it (a waitpoint made in the batch)",
          value: {
            waitpoints: [{ ref: "approval", timeout_seconds: 172800, description: "Approve invoice 2026-118", tags: ["invoices"] }],
            jobs: [{ ref: "email", type: "send_email", depends_on: ["approval"], payload: payloadExamples.send_email }],
          },
        },
      },
    },
    responses: {
      202: {
        description: "Every job created, in request order; then each waitpoint made, in request order, with its one-time complete_url.",
        json: {
          component: "BatchItemAccepted",
          array: true,
          example: [
            { id: JOB_ID, status: "pending", ref: "email" },
            {
              kind: "waitpoint",
              ref: "approval",
              ...waitpointExample,
              expires_at: "2026-11-23T09:30:00.000Z",
              complete_url: "https://conveyor.example.com/waitpoints/complete/3q2-7wFvXw1yGb0qS4cQe8mKp2Lr6tHn9aZdUj5oBfE",
            },
          ],
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 413, 415, 429],
    async handle({ caller, body, req }, deps) {
      if (req.get("idempotency-key") !== undefined) {
        throw validationFailed([{ path: "headers.idempotency-key", message: "is supported on POST /jobs only" }]);
      }
      return { status: 202, json: await createJobs({ caller, inputs: body.jobs, waitpoints: body.waitpoints }, deps) };
    },
  }),
];
