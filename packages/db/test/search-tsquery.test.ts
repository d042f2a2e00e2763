// Search that finds (issue 23): any payload value, quoted by searchTsquery, is found whole and by its prefixes in
// conveyor_search_vector (the expression job_search_vector_idx indexes), and finds nothing else — whatever characters
// it holds (quotes, backslashes, spaces, tsquery operators, any Unicode). Properties over random strings, against
// Postgres itself.
import { PREFIX_MIN_LENGTH, searchTerms, searchTsquery } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import fc from "fast-check";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const matches = async (values: string[], tsquery: string) =>
  (await database.db.pool.query<{ m: boolean }>("SELECT conveyor_search_vector($1::text[]) @@ $2::tsquery AS m", [values, tsquery])).rows[0]!.m;

// Text Postgres can hold (no NUL), often made of the characters tsquery syntax gives meaning to.
const syntax = fc.constantFrom("'", "\\", " ", ":", "*", "&", "|", "!", "(", ")", "<", "-", ">", "\t", "é", "✓", "𝄞");
const value = fc
  .string({ unit: fc.oneof(syntax, fc.string({ minLength: 1, maxLength: 1, unit: "grapheme" })), minLength: 1, maxLength: 40 })
  .filter((s) => !s.includes("\0"));

it("finds every value whole, and by any prefix of it, through the tsquery searchTsquery quotes", async () => {
  await fc.assert(
    fc.asyncProperty(value, fc.nat(), async (text, cut) => {
      expect(await matches([text, "other"], searchTsquery([text]))).toBe(true);
      const chars = [...text];
      const prefix = chars.slice(0, 1 + (cut % chars.length)).join("");
      expect(await matches([text], searchTsquery([], [prefix]))).toBe(true);
    }),
    { numRuns: 300 },
  );
});

it("finds nothing a value does not hold or start with", async () => {
  await fc.assert(
    fc.asyncProperty(value, value, async (held, searched) => {
      fc.pre(held !== searched);
      expect(await matches([held], searchTsquery([searched]))).toBe(false);
      expect(await matches([held], searchTsquery([], [searched]))).toBe(held.startsWith(searched));
    }),
    { numRuns: 300 },
  );
});

it("keeps NULL and empty values out of the vector instead of failing", async () => {
  expect(await matches(["", "INV-1"], searchTsquery(["INV-1"]))).toBe(true);
  const { rows } = await database.db.pool.query<{ v: string | null }>("SELECT conveyor_search_vector(ARRAY[NULL, '', 'a']::text[])::text AS v");
  expect(rows[0]!.v).toBe("'a'");
});

describe("searchTerms", () => {
  it(`reads a trailing * after ${PREFIX_MIN_LENGTH} or more characters as a prefix, shorter ones literally`, () => {
    expect(searchTerms("INV-20*")).toMatchObject({ values: ["INV-20*"], prefix: "INV-20" });
    expect(searchTerms("INV*")).toMatchObject({ prefix: "INV" });
    expect(searchTerms("IN*").prefix).toBeUndefined();
    expect(searchTerms("I*").prefix).toBeUndefined();
    expect(searchTerms("ÜÜÜ*").prefix).toBe("ÜÜÜ");
    expect(searchTerms("INV-20").prefix).toBeUndefined();
    expect(searchTerms("customer:Glo*")).toMatchObject({ prefix: "customer:Glo", field: { name: "customer", value: "Glo*", prefix: "Glo" } });
    expect(searchTerms("customer:Gl*").field).toEqual({ name: "customer", value: "Gl*", prefix: undefined });
  });
});
