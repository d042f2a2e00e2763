// Event streams (docs/reference/events.md#events): the organization's job events as server-sent events, for the job credentials.
import Joi from "joi";
import { EVENT_ID_MAX, EVENT_TYPES } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, endpoint, idParam, type JsonSchema } from "../declarations/endpoint";
import { serveEventStream } from "../http/sse";
import { openEventStream } from "../services/infrastructure/event-stream";
import { assertReadable, boundToCredential } from "../services/live";
import { publicTokenQuery } from "./live";

/** An event id as a client sends it back: digits only, below 2^53. */
const eventId = Joi.string()
  .pattern(/^\d{1,16}$/, "an event id")
  .custom((value: string, helpers) => (Number(value) <= EVENT_ID_MAX ? value : helpers.message({ custom: "is larger than any event id" })))
  .messages({ "string.pattern.name": "must be an event id (digits only)" });

/** Event types, comma-separated: job.succeeded,job.failed. */
const eventTypes = Joi.string()
  .max(500)
  .custom((value: string, helpers) => {
    const types = value
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    const unknown = types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (types.length === 0 || unknown !== undefined) return helpers.message({ custom: `must be one or more of ${EVENT_TYPES.join(", ")}, comma-separated` });
    return [...new Set(types)];
  });

type EventsQuery = { job_id?: string; type?: string[]; last_event_id?: string };
type JobEventsQuery = { type?: string[]; last_event_id?: string; token?: string };

const lastEventIdQuery = eventId.description("Resume after this event id, like the Last-Event-ID header (the header wins when both are sent).");

const lastEventIdHeader = {
  name: "Last-Event-ID",
  schema: eventId,
  document: {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    description: "The id of the last event you received: the stream resumes right after it, with no gap, for as long as events are retained.",
    schema: { type: "string", pattern: "^[0-9]{1,16}$" },
  },
};

const EXAMPLE =
  'id: 251658241\nevent: job.succeeded\ndata: {"id":251658241,"type":"job.succeeded","time":"2026-11-21T09:30:01.250Z",' +
  '"job_id":"0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01","data":{"id":"0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01","type":"send_email","status":"done",…}}\n\n';

const streamSchema: JsonSchema = {
  type: "string",
  description:
    "Server-sent events. Each event: `id:` its id (a number that grows within the organization), `event:` its type, " +
    "`data:` the event as JSON, `{id, type, time, job_id, data}`, where `data` is the job as GET /jobs/{id} shows it " +
    "without its payload. A comment line (`: keep-alive`) comes every 15 seconds.",
  example: EXAMPLE,
};

const lastEventId = (header: string | undefined, query: string | undefined) => {
  const value = header ?? query;
  return value === undefined ? undefined : Number(value);
};

export const eventEndpoints = [
  endpoint({
    method: "get",
    path: "/events",
    operationId: "streamEvents",
    tag: "Events",
    summary: "Stream the organization's job events",
    description:
      "Server-sent events (`text/event-stream`) for every status change of the organization's jobs: `job.created`, " +
      "`job.started`, `job.retrying`, `job.succeeded`, `job.failed`, `job.cancelled`. Without `Last-Event-ID` the stream " +
      "starts now; with it, it first replays what came after that id. Any API replica serves any client. A client that " +
      "stops reading is disconnected once about 1 MiB waits for it; reconnect with `Last-Event-ID` to continue. An organization " +
      "holds at most EVENT_STREAMS_PER_ORG streams open on one API server (default 100; 429 `too_many_streams` beyond).",
    access: "job",
    headers: [lastEventIdHeader],
    query: Joi.object<EventsQuery>({
      job_id: Joi.string().guid().description("Only this job's events."),
      type: eventTypes.description(`Only these event types, comma-separated: ${EVENT_TYPES.join(", ")}.`),
      last_event_id: lastEventIdQuery,
    }),
    responses: { 200: { description: "The stream; it stays open until you close it.", media: { types: ["text/event-stream"], schema: streamSchema } } },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query, headers, res }, deps) {
      const stream = await openEventStream(
        { caller, lastEventId: lastEventId(headers["last-event-id"], query.last_event_id), jobId: query.job_id, types: query.type },
        deps,
      );
      await serveEventStream(res, stream);
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs/:id/events",
    operationId: "streamJobEvents",
    tag: "Events",
    summary: "Stream one job's events",
    description:
      "The job's events as server-sent events, from its first (or after `Last-Event-ID`), closed after its final event " +
      "(`job.succeeded`, `job.failed` or `job.cancelled`) — at once, after replaying its history, if the job has finished. " +
      "Readable with the job's public token (`?token=` for EventSource); such a stream ends when the token expires or is revoked.",
    access: "job_read",
    params: { id: idParam("job") },
    headers: [lastEventIdHeader],
    query: Joi.object<JobEventsQuery>({
      type: eventTypes.description(`Only these event types, comma-separated; the stream still ends after the job's final event.`),
      last_event_id: lastEventIdQuery,
      token: publicTokenQuery,
    }),
    responses: {
      200: { description: "The job's stream; it ends after the job's final event.", media: { types: ["text/event-stream"], schema: streamSchema } },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params, query, headers, res }, deps) {
      assertReadable(caller, params.id);
      const stream = await openEventStream(
        { caller, job: params.id, types: query.type, lastEventId: lastEventId(headers["last-event-id"], query.last_event_id) },
        deps,
      );
      await serveEventStream(res, boundToCredential(stream, caller, deps));
    },
  }),
];
