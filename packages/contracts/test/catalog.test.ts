// Every built-in payload schema: missing field, wrong type, out-of-range value, extra field (docs/reference/robustness.md#r25).
import { BUILT_IN_TYPES, BUILT_IN_TEMPLATES, validatePayload, type BuiltInType, type CatalogOptions } from "@conveyor/contracts";

const options: CatalogOptions = { allowHttp: false, allowPrivateNetwork: false, templateNames: [...BUILT_IN_TEMPLATES, "custom"] };
const check = (type: BuiltInType, payload: unknown) => validatePayload(type, payload, options);
const paths = (type: BuiltInType, payload: unknown) => {
  const result = check(type, payload);
  return result.ok ? [] : result.details.map((d) => d.path).sort();
};

const valid: Record<BuiltInType, Record<string, unknown>> = {
  send_email: { to: "ada@example.com", subject: "Hi", body: "Hello" },
  send_sms: { to: "+254712345678", message: "Your code is 1234" },
  webhook: { url: "https://example.com/hook", payload: { a: 1 } },
  generate_pdf: { template: "invoice", data: { number: "1", customer: "Acme", items: [{ description: "x", quantity: 1, unit_price: 2 }] } },
  compress_image: { url: "https://example.com/a.png", width: 100 },
  ai_summarize: { text: "A long text." },
  mobile_money_stk: { phone: "254712345678", amount: 10, ref: "ORDER1" },
  chat_notify: { channel: "#ops", text: "hello" },
};

describe.each(BUILT_IN_TYPES)("%s payload", (type) => {
  it("accepts a valid payload", () => {
    expect(check(type, valid[type])).toMatchObject({ ok: true });
  });

  it("refuses an extra field by its path", () => {
    expect(paths(type, { ...valid[type], surprise: 1 })).toEqual(["surprise"]);
  });

  it.each(Object.keys(valid[type]))("refuses a missing %s", (field) => {
    const { [field]: _removed, ...rest } = valid[type];
    expect(paths(type, rest)).toEqual([field]);
  });

  it.each(Object.keys(valid[type]))("refuses a wrong type for %s", (field) => {
    expect(paths(type, { ...valid[type], [field]: field === "payload" || field === "data" ? "not an object" : { not: "a string or number" } })).toEqual([
      field,
    ]);
  });

  it("refuses a non-object payload", () => {
    expect(check(type, ["a"]).ok).toBe(false);
    expect(check(type, null).ok).toBe(false);
  });
});

describe("field rules from the seed and docs/reference/lifecycle.md#built-in-handlers", () => {
  it("send_sms: `to` must be E.164", () => {
    for (const to of ["0712345678", "254712345678", "+0712345678", "+2547 1234", "+1234567890123456"])
      expect(paths("send_sms", { ...valid.send_sms, to })).toEqual(["to"]);
  });

  it("send_email: addresses are checked and subjects are one line", () => {
    expect(paths("send_email", { ...valid.send_email, to: "not-an-address" })).toEqual(["to"]);
    expect(paths("send_email", { ...valid.send_email, from: "x@" })).toEqual(["from"]);
    expect(paths("send_email", { ...valid.send_email, subject: "Hi\r\nBcc: victim@example.com" })).toEqual(["subject"]);
  });

  it("mobile_money_stk: digits only, normalised to 254…, whole KES amounts from 1 to 250 000, reference up to 12", () => {
    expect(check("mobile_money_stk", { ...valid.mobile_money_stk, phone: "0712345678" })).toMatchObject({ ok: true, value: { phone: "254712345678" } });
    for (const phone of ["+254712345678", "25471234567", "0812345678", "abc"])
      expect(paths("mobile_money_stk", { ...valid.mobile_money_stk, phone })).toEqual(["phone"]);
    for (const amount of [0, 250_001, 10.5, -1]) expect(paths("mobile_money_stk", { ...valid.mobile_money_stk, amount })).toEqual(["amount"]);
    expect(paths("mobile_money_stk", { ...valid.mobile_money_stk, ref: "ORDER-123456789" })).toEqual(["ref"]);
  });

  it("compress_image: quality 1..100 with default 80, width a positive integer", () => {
    expect(check("compress_image", valid.compress_image)).toMatchObject({ ok: true, value: { quality: 80 } });
    for (const quality of [0, 101, 50.5]) expect(paths("compress_image", { ...valid.compress_image, quality })).toEqual(["quality"]);
    for (const width of [0, -5, 1.5]) expect(paths("compress_image", { ...valid.compress_image, width })).toEqual(["width"]);
  });

  it("ai_summarize: length short|medium|long with default medium", () => {
    expect(check("ai_summarize", valid.ai_summarize)).toMatchObject({ ok: true, value: { length: "medium" } });
    expect(paths("ai_summarize", { ...valid.ai_summarize, length: "tiny" })).toEqual(["length"]);
  });

  it("webhook: https only, no credentials, no internal targets", () => {
    for (const url of ["http://example.com", "ftp://example.com", "https://u:p@example.com", "https://10.0.0.1/", "https://localhost/", "not a url"]) {
      expect(paths("webhook", { ...valid.webhook, url })).toEqual(["url"]);
    }
    expect(validatePayload("webhook", { ...valid.webhook, url: "http://example.com" }, { ...options, allowHttp: true }).ok).toBe(true);
  });

  it("generate_pdf: known templates only; built-in templates check their data, custom ones take any object", () => {
    expect(paths("generate_pdf", { template: "nope", data: {} })).toEqual(["template"]);
    expect(paths("generate_pdf", { template: "invoice", data: { number: "1", customer: "A", items: [] } })).toEqual(["data.items"]);
    expect(paths("generate_pdf", { template: "report", data: { title: "T", sections: [{ heading: "H" }] } })).toEqual(["data.sections.0.body"]);
    expect(check("generate_pdf", { template: "custom", data: { anything: [1, 2] } }).ok).toBe(true);
  });
});
