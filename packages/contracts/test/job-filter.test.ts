import { jobFilterParams, jobFilterSchema, parseInstant, SEARCH_VALUE_MAX_LENGTH, toJobFilter, type JobFilterInput } from "@conveyor/contracts";

const check = (input: unknown) => jobFilterSchema.validate(input, { abortEarly: false, convert: true, errors: { label: false } });

describe("the job filter schema", () => {
  it("takes one status or several comma-separated, and writes them without repeats in lifecycle order", () => {
    expect(check({ status: "failed" }).value).toEqual({ status: "failed" });
    expect(check({ status: "cancelled,failed,cancelled" }).value).toEqual({ status: "failed,cancelled" });
  });

  it.each(["completed", "DONE", "", "done,", ",done", "done,,failed", "done failed"])("refuses status %j, naming the allowed values", (status) => {
    const { error } = check({ status });
    expect(error?.details.map((d) => [d.path.join("."), d.message])).toEqual([
      ["status", expect.stringContaining("pending, processing, done, failed, cancelled")],
    ]);
  });

  it("reads dates as midnight UTC and date-times with their zone, and writes them in UTC", () => {
    expect(check({ created_after: "2026-11-21" }).value).toEqual({ created_after: "2026-11-21T00:00:00.000Z" });
    expect(check({ created_before: "2026-11-21T09:30:00+02:00" }).value).toEqual({ created_before: "2026-11-21T07:30:00.000Z" });
    expect(check({ created_before: "2026-11-21T09:30Z" }).value).toEqual({ created_before: "2026-11-21T09:30:00.000Z" });
  });

  it.each(["yesterday", "2026-13-01", "2026-02-31", "2026-11-21T09:30:00", "20261121", "2026-11-21T25:00:00Z", "1700000000"])(
    "refuses the date %j",
    (value) => {
      expect(parseInstant(value)).toBeNull();
      expect(check({ created_after: value }).error?.details[0]?.message).toMatch(/ISO 8601/);
    },
  );

  it("takes q up to 256 characters, without NUL", () => {
    expect(check({ q: "x".repeat(SEARCH_VALUE_MAX_LENGTH) }).error).toBeUndefined();
    expect(check({ q: "x".repeat(SEARCH_VALUE_MAX_LENGTH + 1) }).error?.details[0]?.path).toEqual(["q"]);
    expect(check({ q: "a\u0000b" }).error?.details[0]?.path).toEqual(["q"]);
    expect(check({ q: "" }).error?.details[0]?.path).toEqual(["q"]);
  });

  it("refuses unknown filters, internal type names and malformed schedule ids", () => {
    const { error } = check({ color: "red", type: "_webhook_delivery", schedule_id: "nope" });
    expect(error?.details.map((d) => d.path.join(".")).sort()).toEqual(["color", "schedule_id", "type"]);
  });

  it("turns a validated input into the query's filter and back into the same parameters", () => {
    const input: JobFilterInput = check({
      status: "failed,done",
      type: "webhook",
      created_after: "2026-11-20",
      created_before: "2026-11-21T00:00:00Z",
      schedule_id: "0193A5C4-7B2E-7C1D-9F3A-2B8E4D6F1A01",
      q: "42",
    }).value;
    const filter = toJobFilter(input);
    expect(filter).toEqual({
      statuses: ["done", "failed"],
      type: "webhook",
      createdAfter: new Date("2026-11-20T00:00:00Z"),
      createdBefore: new Date("2026-11-21T00:00:00Z"),
      scheduleId: "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01",
      q: "42",
    });
    expect(jobFilterParams(filter)).toEqual([
      ["status", "done,failed"],
      ["type", "webhook"],
      ["created_after", "2026-11-20T00:00:00.000Z"],
      ["created_before", "2026-11-21T00:00:00.000Z"],
      ["schedule_id", "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01"],
      ["q", "42"],
    ]);
    expect(jobFilterParams(toJobFilter({}))).toEqual([]);
  });
});
