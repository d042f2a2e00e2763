// The documentation in docs/ holds only what a contributor can follow: every repository path it names exists (or is
// an output the build or a run writes, which git ignores), and docs/decisions/README.md indexes every decision record.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const root = path.join(__dirname, "..");

function markdownFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith(".md") ? [full] : [];
  });
}

// A path as the docs write it: from a top-level folder of the repository, in or out of backticks. A pattern
// (`apps/*/src`, `{a,b}`) names no one file and is passed over; so is the rest of a path after `:line` or `#anchor`.
const topFolders = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules")
  .map((entry) => entry.name);
const repositoryPath = new RegExp(`(?<![\\w./@-])(?:${topFolders.join("|")})/[\\w./-]*[\\w/]`, "g");

/** Paths named in a piece of Markdown, with their line numbers. */
function pathsNamed(text: string): { line: number; path: string }[] {
  return text
    .split("\n")
    .flatMap((line, index) =>
      [...line.matchAll(repositoryPath)]
        .filter((match) => !/^[*{]/.test(line.slice(match.index + match[0].length)))
        .map((match) => ({ line: index + 1, path: match[0].replace(/\.+$/, "") })),
    );
}

/** An output of a build or a run (`dist/`, bench results): git ignores it, as a file or as a folder. */
function ignoredByGit(file: string): boolean {
  try {
    execFileSync("git", ["check-ignore", "--no-index", file, `${file}/`], { cwd: root });
    return true;
  } catch {
    return false;
  }
}

describe("docs/", () => {
  it("finds the paths a piece of Markdown names, and no pattern", () => {
    expect(pathsNamed("see `packages/db/src/core/client.ts:12` and apps/*/src, and docs/reference/http.md#errors.")).toEqual([
      { line: 1, path: "packages/db/src/core/client.ts" },
      { line: 1, path: "docs/reference/http.md" },
    ]);
  });

  it("names only repository paths that exist", () => {
    const missing = markdownFiles(path.join(root, "docs")).flatMap((file) =>
      pathsNamed(readFileSync(file, "utf8"))
        .filter((named) => !existsSync(path.join(root, named.path)) && !ignoredByGit(named.path))
        .map((named) => `${path.relative(root, file)}:${named.line}: ${named.path}`),
    );
    expect(missing).toEqual([]);
  });

  it("indexes every decision record (node scripts/decisions-index.mjs writes the index)", () => {
    const check = () => execFileSync(process.execPath, ["scripts/decisions-index.mjs", "--check"], { cwd: root, stdio: "pipe" });
    expect(check).not.toThrow();
    const index = readFileSync(path.join(root, "docs/decisions/README.md"), "utf8");
    for (const name of readdirSync(path.join(root, "docs/decisions")).filter((name) => name !== "README.md")) {
      expect(name).toMatch(/^\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md$/);
      expect(index).toContain(`](${name})`);
    }
  });
});
