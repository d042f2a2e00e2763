// A new waitpoint's fields (docs/reference/lifecycle.md#waitpoints-and-durable-steps), as POST /waitpoints takes them and as POST /jobs/batch's `waitpoints` items do.
import Joi from "joi";
import {
  WAITPOINT_DESCRIPTION_MAX_LENGTH,
  WAITPOINT_TAGS_MAX,
  WAITPOINT_TAG_MAX_LENGTH,
  WAITPOINT_TIMEOUT_DEFAULT_SECONDS,
  WAITPOINT_TIMEOUT_MAX_SECONDS,
  WAITPOINT_TIMEOUT_MIN_SECONDS,
} from "@conveyor/contracts";

export const waitpointFields = {
  timeout_seconds: Joi.number()
    .integer()
    .min(WAITPOINT_TIMEOUT_MIN_SECONDS)
    .max(WAITPOINT_TIMEOUT_MAX_SECONDS)
    .default(WAITPOINT_TIMEOUT_DEFAULT_SECONDS)
    .description("How long it waits before it expires (an expired waitpoint is a failed dependency of the jobs waiting on it)."),
  description: Joi.string().trim().max(WAITPOINT_DESCRIPTION_MAX_LENGTH).prefs({ convert: true }).description("What completing it means, for people."),
  tags: Joi.array()
    .items(Joi.string().min(1).max(WAITPOINT_TAG_MAX_LENGTH))
    .max(WAITPOINT_TAGS_MAX)
    .description("Labels to find it by (GET /waitpoints?tag=)."),
};
