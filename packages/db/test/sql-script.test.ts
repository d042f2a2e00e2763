// Migration scripts cut into statements (sql-script.ts): at the semicolons that end a statement, never inside a
// PL/pgSQL body, a string, a quoted identifier or a comment; comments alone are no statement.
import { splitSqlScript } from "../src/sql-script";

describe("splitSqlScript", () => {
  it("cuts at statement ends only", () => {
    const script = `-- a comment; with a semicolon and an apostrophe's
CREATE TABLE "a;b" (x text DEFAULT 'it''s; fine');
/* block; comment */
CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RAISE EXCEPTION 'no; way';
END $$;
CREATE FUNCTION g() RETURNS int LANGUAGE sql AS $body$ SELECT 1; $body$;
ALTER TYPE "s" ADD VALUE 'cancelled';
-- trailing comment only`;
    expect(splitSqlScript(script)).toEqual([
      `-- a comment; with a semicolon and an apostrophe's\nCREATE TABLE "a;b" (x text DEFAULT 'it''s; fine')`,
      expect.stringMatching(/^\/\* block; comment \*\/\nCREATE FUNCTION f\(\)[\s\S]*RAISE EXCEPTION 'no; way';\nEND \$\$$/),
      "CREATE FUNCTION g() RETURNS int LANGUAGE sql AS $body$ SELECT 1; $body$",
      `ALTER TYPE "s" ADD VALUE 'cancelled'`,
    ]);
  });

  it("finds nothing in an empty script or one of comments", () => {
    expect(splitSqlScript("")).toEqual([]);
    expect(splitSqlScript("-- nothing here;\n/* nor; here */\n")).toEqual([]);
  });
});
