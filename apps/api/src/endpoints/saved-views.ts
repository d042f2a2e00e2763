// Saved views of the console's jobs list (issue 38): a person names the list's filters and applies them again later.
// A user token or console session only (a view is a person's, so an API key is refused), any role; each person sees
// and deletes only their own views, in the organization their credential acts for.
import Joi from "joi";
import { jobFilterSchema, type JobFilterInput } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { deleteView, listViews, SAVED_VIEWS_PER_USER, saveView } from "../services/saved-views";

export const SAVED_VIEW_NAME_MAX = 80;

const VIEW_ID = "0193a5c4-7777-7c1d-9f3a-2b8e4d6f1a01";
const example = {
  id: VIEW_ID,
  name: "Failed webhooks this week",
  filter: { status: "failed", type: "webhook", created_after: "2026-11-16T00:00:00.000Z" },
  created_at: "2026-11-21T09:30:00.000Z",
};

const saveBody = Joi.object<{ name: string; filter: JobFilterInput }>({
  name: Joi.string()
    .trim()
    .min(1)
    .max(SAVED_VIEW_NAME_MAX)
    // A name is one line of words: no control characters (a newline, a NUL).
    .pattern(/^[^\p{Cc}]*$/u, "text without control characters")
    .prefs({ convert: true })
    .required()
    .description(`What the person calls it, 1 to ${SAVED_VIEW_NAME_MAX} characters; unique among their views.`),
  filter: jobFilterSchema
    .min(1)
    .required()
    .messages({ "object.min": "needs at least one filter (a view without one is the whole list)" })
    .description("The GET /jobs filters (the same names and values, validated the same way); at least one."),
});

export const savedViewEndpoints = [
  endpoint({
    method: "get",
    path: "/saved-views",
    operationId: "listSavedViews",
    tag: "Jobs",
    summary: "Your saved views of the jobs list",
    description: "The caller's own views in the organization of their credential, by name. Nobody else's are listed, whatever their role.",
    access: "user",
    responses: { 200: { description: "The views.", json: { component: "SavedView", array: true, example: [example] } } },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await listViews({ caller }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/saved-views",
    operationId: "saveView",
    tag: "Jobs",
    summary: "Save the jobs list's filters under a name",
    description:
      `A person keeps at most ${SAVED_VIEWS_PER_USER} views (409 \`saved_view_limit\` past that); a name they already use is 409 ` +
      "`saved_view_name_taken`. The filter is checked like GET /jobs's query, so a view always opens a valid list.",
    access: "user",
    body: {
      schema: saveBody,
      examples: { failedWebhooks: { summary: "Failed webhooks since a date", value: { name: example.name, filter: example.filter } } },
    },
    responses: { 201: { description: "Saved.", json: { component: "SavedView", example } } },
    errors: [...BODY_ERRORS, 401, 403, 409, 503],
    async handle({ caller, body, req }, deps) {
      const saved = await saveView({ caller, name: body.name, filter: body.filter }, deps);
      req.log.info("saved view created", { savedViewId: saved.id });
      return { status: 201, json: saved };
    },
  }),
  endpoint({
    method: "delete",
    path: "/saved-views/:id",
    operationId: "deleteSavedView",
    tag: "Jobs",
    summary: "Delete one of your saved views",
    description: "Only the caller's own view; another person's is 404, like an unknown id.",
    access: "user",
    params: { id: idParam("saved view") },
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, req }, deps) {
      await deleteView({ caller, id: params.id }, deps);
      req.log.info("saved view deleted", { savedViewId: params.id });
      return { status: 204 };
    },
  }),
];
