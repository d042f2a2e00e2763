// The repository cites only what it contains: what the service promises is in docs/reference/, and code, tests and
// docs point at it by path and anchor (docs/reference/lifecycle.md#leases). No file cites the product contract, the
// robustness list or the provider protocols that the reference was written from, and every anchor cited exists on its page.
// Applied migrations (prisma/migrations/) are history and are not edited, so they are not read here.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const root = path.join(__dirname, "..");
const reference = "docs/reference/";
// Spelled apart so that this file does not cite them itself.
const outsideCitations = ["SPEC" + " §", "ROBUST" + "NESS", "PROVIDERS" + ".md"];

function repositoryTextFiles(): { file: string; text: string }[] {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" });
  return listed
    .split("\0")
    .filter((file) => file && !file.startsWith("prisma/migrations/") && !/\.(png|jpe?g|gif|ico|woff2?|pdf|wasm)$/i.test(file))
    .flatMap((file) => {
      const full = path.join(root, file);
      if (!existsSync(full)) return [];
      const text = readFileSync(full, "utf8");
      return text.includes("\0") ? [] : [{ file, text }];
    });
}

/** The anchors a Markdown page offers: its headings, as GitHub makes their ids, and its explicit `<a id>`s. */
function anchorsOf(page: string): Set<string> {
  const text = readFileSync(path.join(root, reference, page), "utf8");
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
    (match[1] ?? "")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replaceAll(" ", "-"),
  );
  const explicit = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1] ?? "");
  return new Set([...headings, ...explicit]);
}

const files = repositoryTextFiles();

describe("citations", () => {
  it("cites no document outside the repository", () => {
    const found = files
      .filter(({ file }) => !file.startsWith(reference))
      .flatMap(({ file, text }) =>
        text
          .split("\n")
          .map((line, index) => ({ line, index }))
          .filter(({ line }) => outsideCitations.some((citation) => line.includes(citation)))
          .map(({ index }) => `${file}:${index + 1}`),
      );
    expect(found).toEqual([]);
  });

  it("points only at pages and anchors of docs/reference that exist", () => {
    const anchors = new Map<string, Set<string>>();
    const broken = files.flatMap(({ file, text }) =>
      [...text.matchAll(/docs\/reference\/([\w-]+\.md)(?:#([\w-]+))?/g)].flatMap((match) => {
        const [cited, page = "", anchor] = match;
        if (!existsSync(path.join(root, reference, page))) return [`${file}: ${cited} (no such page)`];
        const offered = anchors.get(page) ?? anchorsOf(page);
        anchors.set(page, offered);
        return anchor && !offered.has(anchor) ? [`${file}: ${cited} (no such anchor)`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it("reads headings and explicit anchors as GitHub does", () => {
    expect([...anchorsOf("time.md")]).toContain("time-priority-and-fairness");
    expect([...anchorsOf("robustness.md")]).toEqual(expect.arrayContaining(["r1", "r60", "a", "j", "a-nothing-is-lost"]));
  });
});
