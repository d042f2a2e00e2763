// Health, metrics, this reference itself, and provider callbacks (SPEC §6, §7).
import { callbackBody } from "../../services/callbacks";
import type { Operation } from "../operation";

const text = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });

export const serviceOperations: Operation[] = [
  {
    method: "get",
    path: "/healthz",
    operationId: "healthz",
    tag: "Operations",
    summary: "Liveness",
    description: "200 while the process runs; for container health checks.",
    auth: "none",
    responses: { 200: { description: "Up.", json: { component: "Health", example: { status: "ok" } } } },
    errors: [500],
  },
  {
    method: "get",
    path: "/readyz",
    operationId: "readyz",
    tag: "Operations",
    summary: "Readiness",
    description: "200 while Postgres and Redis answer and Redis will not evict keys; route traffic on it. 503 names each failing dependency in `details`.",
    auth: "none",
    responses: {
      200: {
        description: "Ready.",
        json: { component: "Ready", example: { status: "ready", checks: { postgres: "ok", redis: "ok", redis_maxmemory_policy: "noeviction" } } },
      },
    },
    errors: [500, 503],
  },
  {
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    tag: "Operations",
    summary: "Prometheus metrics",
    description:
      "Prometheus text format: HTTP request durations by route pattern and status, jobs created by type, and process metrics. " +
      "No credential, like /healthz: it holds no tenant data; keep it off the public load balancer. See docs/operations.md.",
    auth: "none",
    responses: { 200: text("Metrics in Prometheus text format 0.0.4.", "text/plain") },
    errors: [500],
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    tag: "Reference",
    summary: "This document",
    description: "OpenAPI 3.1, generated from the same joi schemas the routes validate with.",
    auth: "none",
    responses: { 200: { description: "The OpenAPI document.", media: { types: ["application/json"], schema: { type: "object" } } } },
    errors: [500],
  },
  {
    method: "get",
    path: "/",
    operationId: "root",
    tag: "Reference",
    summary: "Where a browser lands",
    description: "Redirects to /docs.",
    auth: "none",
    responses: { 302: { description: "To the reference page.", headers: { Location: { description: "/docs", schema: { type: "string" } } } } },
    errors: [500],
  },
  {
    method: "get",
    path: "/docs",
    operationId: "docs",
    tag: "Reference",
    summary: "The API reference page",
    description: "This document rendered for people (Scalar), served entirely by the API: no CDN, no external fonts.",
    auth: "none",
    responses: { 200: text("The page.", "text/html") },
    errors: [500],
  },
  {
    method: "get",
    path: "/docs/scalar.js",
    operationId: "docsRenderer",
    tag: "Reference",
    summary: "The reference page's renderer",
    description: "Scalar's standalone bundle. Cached for a year; the page links it with a content hash.",
    auth: "none",
    responses: { 200: text("JavaScript.", "text/javascript") },
    errors: [500],
  },
  {
    method: "get",
    path: "/docs/init.js",
    operationId: "docsInit",
    tag: "Reference",
    summary: "The reference page's start-up script",
    auth: "none",
    responses: { 200: text("JavaScript.", "text/javascript") },
    errors: [500],
  },
  {
    method: "post",
    path: "/callbacks/mpesa/:job_id",
    operationId: "mpesaCallback",
    tag: "Callbacks",
    summary: "M-Pesa STK push result (called by Safaricom)",
    description:
      "Safaricom posts the outcome of a mobile_money_stk job's payment prompt here. Authenticated by the per-job `secret` " +
      "Conveyor put in the push's CallBackURL; an unknown job, a wrong secret or another push's CheckoutRequestID is 404. " +
      "Recorded once as a job log line and `result.callback`; repeats are accepted and ignored.",
    auth: "none",
    pathParams: { job_id: { description: "The mobile_money_stk job.", schema: { type: "string", format: "uuid" } } },
    query: [{ name: "secret", in: "query", required: true, description: "The per-job secret from the CallBackURL.", schema: { type: "string" } }],
    body: {
      joi: callbackBody,
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
          value: { Body: { stkCallback: { MerchantRequestID: "29115-34620561-1", CheckoutRequestID: "ws_CO_191220191020363925", ResultCode: 1032, ResultDesc: "Request cancelled by user" } } },
        },
      },
    },
    responses: { 200: { description: "Recorded (or a repeat).", json: { component: "CallbackAccepted", example: { ResultCode: 0, ResultDesc: "Accepted" } } } },
    errors: [400, 404, 413, 415, 500, 503],
  },
];
