// The OpenAPI components of a job name the fields of @conveyor/contracts/job-shape, in its order: the lists are the
// job's shape written once, and a field added to the SQL and the lists but not here (or the other way) fails here.
import type Joi from "joi";
import { JOB_DETAIL_FIELDS, JOB_ITEM_FIELDS } from "@conveyor/contracts";
import { responseSchemas } from "../src/declarations/responses";

/** The component's keys a response always carries (required), in the order it declares them. */
function requiredKeys(schema: Joi.Schema): string[] {
  const keys = (schema.describe() as { keys: Record<string, { flags?: { presence?: string } }> }).keys;
  return Object.entries(keys)
    .filter(([, key]) => key.flags?.presence === "required")
    .map(([name]) => name);
}

describe("a job's OpenAPI components", () => {
  it("JobListItem carries JOB_ITEM_FIELDS in their order", () => {
    expect(requiredKeys(responseSchemas.JobListItem)).toEqual([...JOB_ITEM_FIELDS]);
  });

  it("Job carries JOB_DETAIL_FIELDS", () => {
    expect(requiredKeys(responseSchemas.Job).sort()).toEqual([...JOB_DETAIL_FIELDS].sort());
  });
});
