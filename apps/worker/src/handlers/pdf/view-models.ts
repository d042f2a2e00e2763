// What the built-in templates render: the job's data with amounts computed and formatted here, in code, so a
// template only lays things out. Money is summed in minor units of the currency, never in floating point.

type LineItem = { description: string; quantity: number; unit_price: number };
type Customer = string | { name: string; email?: string; address?: string };
export type BillingData = { number: string; customer: Customer; items: LineItem[]; currency?: string; date?: string; notes?: string };
export type ReportData = { title: string; sections: { heading: string; body: string }[] };

const LOCALE = "en-US";

export function moneyFormat(currency: string): { format(minor: number): string; digits: number } {
  const formatter = new Intl.NumberFormat(LOCALE, { style: "currency", currency });
  const digits = formatter.resolvedOptions().maximumFractionDigits ?? 2;
  return { digits, format: (minor) => formatter.format(minor / 10 ** digits) };
}

const quantityFormat = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 4 });
const dateFormat = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });

/** `value` (an ISO date or date-time) as "21 November 2026"; today when absent. */
export function documentDate(value: string | undefined, now: Date): string {
  const date = value ? new Date(value) : now;
  return dateFormat.format(Number.isNaN(date.getTime()) ? now : date);
}

/** quantity × unit price in minor units, rounded half up after removing floating-point noise. */
function lineAmountMinor(quantity: number, unitPrice: number, digits: number): number {
  return Math.round(Number((quantity * unitPrice * 10 ** digits).toPrecision(15)));
}

export function billingView(kind: "invoice" | "receipt", data: BillingData, now: Date) {
  const currency = data.currency ?? "USD";
  const money = moneyFormat(currency);
  let totalMinor = 0;
  const items = data.items.map((item, index) => {
    const amountMinor = lineAmountMinor(item.quantity, item.unit_price, money.digits);
    totalMinor += amountMinor;
    return {
      position: index + 1,
      description: item.description,
      quantity: quantityFormat.format(item.quantity),
      unit_price: money.format(lineAmountMinor(1, item.unit_price, money.digits)),
      amount: money.format(amountMinor),
    };
  });
  const customer = typeof data.customer === "string" ? { name: data.customer } : data.customer;
  return {
    kind,
    title: kind === "invoice" ? "Invoice" : "Receipt",
    number: data.number,
    date: documentDate(data.date, now),
    currency,
    customer,
    items,
    item_count: items.length,
    item_count_label: `${items.length} line item${items.length === 1 ? "" : "s"}`,
    subtotal: money.format(totalMinor),
    total: money.format(totalMinor),
    notes: data.notes,
  };
}

export function reportView(data: ReportData, now: Date) {
  return {
    title: data.title,
    date: documentDate(undefined, now),
    section_count: data.sections.length,
    show_contents: data.sections.length > 1,
    sections: data.sections.map((section, index) => ({
      number: index + 1,
      heading: section.heading,
      // Blank lines separate paragraphs; single line breaks are kept inside a paragraph (CSS pre-line).
      paragraphs: section.body
        .split(/\r?\n\s*\r?\n/)
        .map((p) => p.trim())
        .filter(Boolean),
    })),
  };
}
