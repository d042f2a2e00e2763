import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { StartupError, templateNames } from "@conveyor/config";

describe("templateNames", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "conveyor-template-names-"));
    for (const file of ["letter.hbs", "award.hbs", "invoice.hbs", "README.md", "a b.hbs"]) await writeFile(path.join(dir, file), "<p></p>");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("offers the built-in templates when TEMPLATES_DIR is unset", () => {
    expect(templateNames(undefined)).toEqual(["invoice", "receipt", "report"]);
  });

  it("adds TEMPLATES_DIR's <name>.hbs files after the built-in ones, once each", () => {
    expect(templateNames(dir)).toEqual(["invoice", "receipt", "report", "award", "letter"]);
  });

  it("refuses to start on a TEMPLATES_DIR it cannot read, naming the variable", () => {
    const missing = path.join(dir, "missing");
    expect(() => templateNames(missing)).toThrow(StartupError);
    expect(() => templateNames(missing)).toThrow(`TEMPLATES_DIR: cannot read ${missing}: ENOENT`);
  });
});
