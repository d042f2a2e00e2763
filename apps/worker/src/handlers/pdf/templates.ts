// Finding and compiling generate_pdf's Handlebars templates: the built-in ones shipped in apps/worker/templates
// (with their partials), and an operator's own `<name>.hbs` files in TEMPLATES_DIR. An operator's file with a
// built-in name replaces that design but keeps its data contract (validated by the API) and computed totals.
// Which names jobs may use is decided at start-up by templateNames() in @conveyor/config.
import { readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";
import Handlebars from "handlebars";
import { BUILT_IN_TEMPLATES, PermanentJobError } from "@conveyor/contracts";
import { documentDate, moneyFormat } from "./view-models";

/** apps/worker/templates, found the same way from src/handlers/pdf (tests, tsx) and dist/handlers/pdf (production). */
export const BUILT_IN_TEMPLATES_DIR = path.resolve(__dirname, "../../../templates");

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

export type RenderOptions = {
  /** The render's date: what `{{date}}` prints where the data has none. */
  now: Date;
};

export type Template = { name: string; custom: boolean; render(context: unknown, options: RenderOptions): string };

/** Bad template source, or a template that fails while rendering: fixing it is the operator's job. */
export class TemplateError extends PermanentJobError {
  override name = "TemplateError";
}

function compile(hbs: typeof Handlebars, name: string, source: string): Template["render"] {
  try {
    // Compiling is lazy in Handlebars; parse now so a syntax error is reported as such, before any rendering.
    hbs.parse(source);
  } catch (error) {
    throw new TemplateError(`Template "${name}" does not compile: ${firstLine(error)}`);
  }
  const template = hbs.compile(source, { strict: false });
  return (context, { now }) => {
    try {
      // Per-render values reach the helpers as Handlebars data (`options.data`), not as shared state.
      return template(context, { data: { now } });
    } catch (error) {
      throw new TemplateError(`Template "${name}" failed to render: ${firstLine(error)}`);
    }
  };
}

const firstLine = (error: unknown) => String((error as Error)?.message ?? error).split("\n")[0];

type Helper = (params: unknown[], options: Handlebars.HelperOptions) => unknown;

/**
 * Registers `helper` so that a data value wins over it: `{{date}}` (no parameters, no hash, not a block) prints
 * the current context's own `date` when it has one, as `{{date}}` would without the helper. Templates print their
 * data by name, and a field must not turn into today's date because a helper happens to share its name.
 */
function registerHelper(hbs: typeof Handlebars, name: string, helper: Helper): void {
  hbs.registerHelper(name, function (this: unknown, ...args: unknown[]) {
    const options = args.pop() as Handlebars.HelperOptions;
    const bare = args.length === 0 && Object.keys(options.hash ?? {}).length === 0 && !options.fn;
    if (bare && typeof this === "object" && this !== null && Object.hasOwn(this, name)) return (this as Record<string, unknown>)[name];
    return helper(args, options);
  });
}

/** Helpers any template may use; their output is escaped by `{{ }}` like every other value. */
function registerHelpers(hbs: typeof Handlebars): void {
  registerHelper(hbs, "money", ([amount, currency]) => {
    const money = moneyFormat(typeof currency === "string" && /^[A-Z]{3}$/.test(currency) ? currency : "USD");
    return money.format(Math.round(Number(amount) * 10 ** money.digits));
  });
  registerHelper(hbs, "date", ([value], options) => documentDate(typeof value === "string" ? value : undefined, (options.data as RenderOptions).now));
  registerHelper(hbs, "multiply", ([a, b]) => Number(a) * Number(b));
}

export type TemplateStore = {
  /** The template called `name`: TEMPLATES_DIR's first, then the built-in one. Throws PermanentJobError if none. */
  resolve(name: string): Promise<Template>;
};

export async function createTemplateStore(templatesDir: string | undefined): Promise<TemplateStore> {
  const hbs = Handlebars.create();
  registerHelpers(hbs);
  const partialsDir = path.join(BUILT_IN_TEMPLATES_DIR, "partials");
  for (const file of (await readdir(partialsDir)).filter((f) => f.endsWith(".hbs"))) {
    hbs.registerPartial(file.slice(0, -4), await readFile(path.join(partialsDir, file), "utf8"));
  }
  const builtIns = new Map<string, Template>();
  for (const name of BUILT_IN_TEMPLATES) {
    const source = await readFile(path.join(BUILT_IN_TEMPLATES_DIR, `${name}.hbs`), "utf8");
    builtIns.set(name, { name, custom: false, render: compile(hbs, name, source) });
  }
  // Operators may edit their files while workers run: a changed file is compiled again.
  const custom = new Map<string, { mtimeMs: number; template: Template }>();

  return {
    async resolve(name) {
      if (!NAME.test(name)) throw new PermanentJobError(`"${name}" is not a template name`);
      if (templatesDir) {
        const file = path.join(templatesDir, `${name}.hbs`);
        const info = await stat(file).catch(() => null);
        if (info?.isFile()) {
          const cached = custom.get(name);
          if (cached && cached.mtimeMs === info.mtimeMs) return cached.template;
          // The error (a path under TEMPLATES_DIR) stays out of the message: the org reads it in the job's error.
          const source = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
            throw new TemplateError(`Template "${name}" could not be read from TEMPLATES_DIR (${error.code ?? "error"})`);
          });
          const template: Template = { name, custom: true, render: compile(hbs, name, source) };
          custom.set(name, { mtimeMs: info.mtimeMs, template });
          return template;
        }
      }
      const builtIn = builtIns.get(name);
      if (builtIn) return builtIn;
      throw new PermanentJobError(
        `No template called "${name}" (built-in: ${BUILT_IN_TEMPLATES.join(", ")}${templatesDir ? `; or a ${name}.hbs file in TEMPLATES_DIR` : ""})`,
      );
    },
  };
}
