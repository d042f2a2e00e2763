// Splitting a migration script into statements, for Prisma's pg adapter, which runs a script one statement at a
// time and finds them by cutting at every ";" — inside a PL/pgSQL function body too, which breaks any trigger
// function. Statements still run one by one (a migration may add an enum value and use it in a later statement,
// which one transaction would refuse); only the cutting is done knowing where quotes, dollar quotes and comments are.
import { PrismaPg } from "@prisma/adapter-pg";

// A comment, a quoted string or identifier, a dollar-quoted body, or a statement's end; everything else is text.
const TOKEN = /--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'|"(?:[^"]|"")*"|(\$[A-Za-z_]*\$)[\s\S]*?\1|;/g;

/** The statements of `script`, cut at the semicolons that end one (not those in strings, bodies or comments). */
export function splitSqlScript(script: string): string[] {
  const statements: string[] = [];
  let start = 0;
  for (const match of script.matchAll(TOKEN)) {
    if (match[0] !== ";") continue;
    statements.push(script.slice(start, match.index));
    start = match.index + 1;
  }
  statements.push(script.slice(start));
  const withoutComments = (statement: string) => statement.replace(TOKEN, (token) => (token.startsWith("--") || token.startsWith("/*") ? "" : token));
  return statements.map((statement) => statement.trim()).filter((statement) => withoutComments(statement).trim() !== "");
}

type Adapter = Awaited<ReturnType<PrismaPg["connect"]>>;

/** Prisma's pg adapter factory, whose connections run a script as the statements splitSqlScript finds. */
export class ScriptAwarePg extends PrismaPg {
  override async connect(): Promise<Adapter> {
    const adapter = await super.connect();
    // Each statement through the adapter's own query path, so an error reaches the engine in the form it expects.
    adapter.executeScript = async (script) => {
      for (const sql of splitSqlScript(script)) await adapter.executeRaw({ sql, args: [], argTypes: [] });
    };
    return adapter;
  }
}
