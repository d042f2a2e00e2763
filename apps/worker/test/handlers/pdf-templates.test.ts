// generate_pdf's templates rendered to HTML, without Chromium: which wins when a data field and a helper share a
// name, and which date a document gets. The PDFs themselves are checked in generate-pdf.test.ts.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTemplateStore, type TemplateStore } from "../../src/handlers/pdf/templates";
import { billingView } from "../../src/handlers/pdf/view-models";

const now = new Date("2031-05-02T09:30:00Z");
const TODAY = "2 May 2031";

let dir: string;
let store: TemplateStore;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "conveyor-templates-"));
  const custom = {
    bare: "[{{date}}|{{money}}|{{multiply}}]",
    raw: "[{{{date}}}]",
    today: "[{{date}}]",
    params: '[{{date due}}|{{money fee "EUR"}}|{{multiply copies fee}}]',
    hash: '[{{date note="hash arguments make it a helper call"}}]',
    nested: "[{{#with customer}}{{date}}{{/with}}|{{#each items}}{{date}};{{/each}}]",
  };
  for (const [name, source] of Object.entries(custom)) await writeFile(path.join(dir, `${name}.hbs`), source);
  store = await createTemplateStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const render = async (name: string, context: unknown) => (await store.resolve(name)).render(context, { now });

describe("a data field named like a helper", () => {
  it("is printed, escaped, when the template names it without parameters", async () => {
    expect(await render("bare", { date: "<b>Friday</b>", money: "plenty", multiply: 0 })).toBe("[&lt;b&gt;Friday&lt;/b&gt;|plenty|0]");
    expect(await render("raw", { date: "<b>Friday</b>" })).toBe("[<b>Friday</b>]");
  });

  it("leaves helper calls with parameters or hash arguments to the helper", async () => {
    const data = { date: "ignored", money: "ignored", multiply: "ignored", due: "2026-03-14", fee: 49.5, copies: 2 };
    expect(await render("params", data)).toBe("[14 March 2026|€49.50|99]");
    expect(await render("hash", { date: "ignored" })).toBe(`[${TODAY}]`);
  });

  it("is looked up in the current context only; elsewhere the helper runs with the render's date", async () => {
    expect(await render("today", { customer: { date: "not the current context" } })).toBe(`[${TODAY}]`);
    expect(await render("nested", { date: "outer", customer: { name: "A" }, items: [{ date: "own" }, {}] })).toBe(`[${TODAY}|own;${TODAY};]`);
  });
});

describe("the built-in templates", () => {
  const data = { number: "INV-1", customer: "Kamau & Co", items: [{ description: "Delivery", quantity: 1, unit_price: 10 }] };

  it("print the data's date, not the render's", async () => {
    const html = await render("invoice", billingView("invoice", { ...data, date: "2026-11-21" }, now));
    expect(html).toContain('<td class="value">21 November 2026</td>');
    expect(html).not.toContain(TODAY);
  });

  it("print the render's date when the data has none", async () => {
    expect(await render("receipt", billingView("receipt", data, now))).toContain(`<td class="value">${TODAY}</td>`);
  });
});
