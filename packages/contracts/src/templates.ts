// Data shapes of the built-in PDF templates. The worker renders them; the API validates `data` with these
// before it stores a generate_pdf job, so a typo in an invoice is a 400, not a failed job an hour later.
import Joi from "joi";

const money = Joi.number().min(0).max(1e12).precision(4);
const lineItems = Joi.array()
  .min(1)
  .max(500)
  .items(
    Joi.object({
      description: Joi.string().min(1).max(500).required(),
      quantity: Joi.number().greater(0).max(1e9).required(),
      unit_price: money.required(),
    }),
  );

const billing = Joi.object({
  number: Joi.string().min(1).max(64).required(),
  customer: Joi.alternatives()
    .try(
      Joi.string().min(1).max(200),
      Joi.object({ name: Joi.string().min(1).max(200).required(), email: Joi.string().max(254), address: Joi.string().max(500) }),
    )
    .required(),
  items: lineItems.required(),
  currency: Joi.string()
    .pattern(/^[A-Z]{3}$/)
    .default("USD"),
  date: Joi.string().isoDate(),
  notes: Joi.string().max(2000),
});

export const builtInTemplates = {
  invoice: billing,
  receipt: billing,
  report: Joi.object({
    title: Joi.string().min(1).max(200).required(),
    sections: Joi.array()
      .min(1)
      .max(200)
      .items(Joi.object({ heading: Joi.string().min(1).max(200).required(), body: Joi.string().max(20000).required() }))
      .required(),
  }),
} as const;

export type BuiltInTemplate = keyof typeof builtInTemplates;
export const BUILT_IN_TEMPLATES = Object.keys(builtInTemplates) as BuiltInTemplate[];

/** Template names from a directory listing: `<name>.hbs` files whose name is a valid identifier. */
export function templateNamesFromFiles(files: readonly string[]): string[] {
  return [...new Set(files.filter((f) => /^[a-z0-9][a-z0-9_-]{0,63}\.hbs$/i.test(f)).map((f) => f.slice(0, -4)))].sort();
}
