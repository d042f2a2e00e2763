// Waitpoints and durable steps (docs/reference/lifecycle.md#waitpoints-and-durable-steps): the limits the API and the worker share. No I/O.

/** What a waitpoint can be: waiting until completed, expired (its timeout passed) or cancelled. */
export const WAITPOINT_STATUSES = ["waiting", "completed", "expired", "cancelled"] as const;
export type WaitpointStatus = (typeof WAITPOINT_STATUSES)[number];

/** A waitpoint's timeout: one minute to 30 days, a day by default. */
export const WAITPOINT_TIMEOUT_MIN_SECONDS = 60;
export const WAITPOINT_TIMEOUT_MAX_SECONDS = 2_592_000;
export const WAITPOINT_TIMEOUT_DEFAULT_SECONDS = 86_400;

/** A completion's `data`: any JSON value, at most 64 KiB as JSON text. */
export const WAITPOINT_DATA_MAX_BYTES = 64 * 1024;
export const WAITPOINT_DESCRIPTION_MAX_LENGTH = 1000;
export const WAITPOINT_TAGS_MAX = 20;
export const WAITPOINT_TAG_MAX_LENGTH = 100;

/** The path of a waitpoint's capability URL, before its token. */
export const WAITPOINT_COMPLETE_PATH = "/waitpoints/complete/";

/** A step's stored result: JSON of at most 256 KiB. */
export const STEP_RESULT_MAX_BYTES = 256 * 1024;
/** A step's name: what identifies it across attempts. */
export const STEP_NAME_MAX_LENGTH = 200;
/** The longest ctx.sleep: as long as a waitpoint may wait. */
export const SLEEP_MAX_MS = WAITPOINT_TIMEOUT_MAX_SECONDS * 1000;

/** A step as GET /jobs/{id} lists it. */
export type JobStepJson = {
  name: string;
  kind: "step" | "sleep" | "wait";
  status: "succeeded" | "sleeping" | "waiting" | "completed" | "failed";
  attempt: number;
  started_at: string;
  finished_at: string | null;
  wake_at?: string | null;
  waitpoint_id?: string | null;
};
