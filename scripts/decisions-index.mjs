// Writes docs/decisions/README.md, the index of the decision records: one line per file of docs/decisions/
// named <YYYY-MM-DD>-<slug>.md, oldest first, titled by the record's first heading. Run it after adding a record:
//   node scripts/decisions-index.mjs          (rewrites the index)
//   node scripts/decisions-index.mjs --check  (exits 1 when the index is not what it would write)
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const folder = join(import.meta.dirname, "..", "docs", "decisions");
const record = /^(\d{4}-\d{2}-\d{2})-[a-z0-9-]+\.md$/;

export function decisionsIndex() {
  const rows = readdirSync(folder)
    .filter((name) => record.test(name))
    .sort()
    .map((name) => {
      const heading = /^# (.+)$/m.exec(readFileSync(join(folder, name), "utf8"));
      if (!heading) throw new Error(`docs/decisions/${name} has no "# " heading`);
      return `- ${record.exec(name)[1]} [${heading[1].replaceAll("[", "\\[").replaceAll("]", "\\]")}](${name})`;
    });
  return [
    "# Decisions",
    "",
    "Choices the product contract left open, and why: one dated record per topic (context, decision, consequences).",
    "A new decision is a new file `<date>-<slug>.md` in this folder whose first line is `# <title>`; then run",
    "`node scripts/decisions-index.mjs` to rewrite this index (a test fails while it is out of date).",
    "What the service promises is in [docs/reference](../reference/README.md).",
    "",
    ...rows,
    "",
  ].join("\n");
}

const target = join(folder, "README.md");
if (process.argv.includes("--check")) {
  if (readFileSync(target, "utf8") !== decisionsIndex()) {
    console.error("docs/decisions/README.md is out of date: run node scripts/decisions-index.mjs");
    process.exit(1);
  }
} else {
  writeFileSync(target, decisionsIndex());
}
