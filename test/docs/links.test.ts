/**
 * The README is the front door and docs/ holds the rest (issue 27, item 1): this keeps the two joined. Every
 * relative link in README.md and docs/**\/*.md must reach a file that exists and, when it names an anchor, a
 * heading of that file under GitHub's anchor rules; and every page under docs/ must be linked from the README
 * itself, so nothing moved there is lost to a reader who starts at the top.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** Markdown files under `dir`, as paths relative to the repository root. */
function markdownUnder(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(root, dir)).sort()) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) found.push(...markdownUnder(path));
    else if (name.endsWith(".md")) found.push(path);
  }
  return found;
}

/** Text outside fenced blocks and code spans: what GitHub renders as prose, where links live. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
    .replace(/(`+)[\s\S]*?\1/g, "");
}

/**
 * GitHub's anchor for a heading (github-slugger, as github.com applies it): the rendered text (code spans keep
 * their content, links their text, emphasis loses its markers), lower-cased, every character that is not a
 * letter, digit, mark, space, hyphen or underscore removed, each space a hyphen; a repeat gets -1, -2, ...
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[*~]/g, "");
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a Markdown file offers: its ATX headings' slugs, duplicates numbered as GitHub numbers them. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = githubSlug(match[1]!.trim());
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of withoutFences.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

/** Inline link targets in prose (images included), without their optional titles. */
export function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** The dead links of one file (paths relative to the repository root), each with why it is dead. */
export function deadLinks(file: string, read: (path: string) => string | undefined): string[] {
  const text = read(file);
  if (text === undefined) return [`${file}: cannot be read`];
  const dead: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...: not ours to check here
    const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
    const linked = pathPart === "" ? file : join(dirname(file), decodeURIComponent(pathPart));
    if (relative(root, resolve(root, linked)).startsWith("..")) {
      dead.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    const linkedText = read(linked);
    if (linkedText === undefined && !existsSync(join(root, linked))) {
      dead.push(`${file}: ${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && anchor !== "") {
      if (linkedText === undefined || !linked.endsWith(".md")) dead.push(`${file}: ${target}: anchor into a file without headings`);
      else if (!anchorsOf(linkedText).has(decodeURIComponent(anchor))) dead.push(`${file}: ${target}: no heading with that anchor`);
    }
  }
  return dead;
}

const readFromDisk = (path: string): string | undefined => {
  const full = join(root, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, "utf8") : undefined;
};

describe("GitHub anchors", () => {
  it("follow GitHub's rules for code, punctuation, links and repeats", () => {
    expect(githubSlug("Signals, pipes and output files")).toBe("signals-pipes-and-output-files");
    expect(githubSlug("Compressed bundles (CCOB, `-compress`)")).toBe("compressed-bundles-ccob--compress");
    expect(githubSlug("`-type=a -unbundle` (heterogeneous device archives)")).toBe("-typea--unbundle-heterogeneous-device-archives");
    expect(githubSlug("Packages: wheels, .deb, .rpm, conda, tarballs and container images")).toBe(
      "packages-wheels-deb-rpm-conda-tarballs-and-container-images",
    );
    expect(githubSlug("Editing linked ELF files: `.hip_fatbin` (`src/elf-edit/`)")).toBe("editing-linked-elf-files-hip_fatbin-srcelf-edit");
    expect(githubSlug("See [the page](x.md) **now**")).toBe("see-the-page-now");
    expect([...anchorsOf("# A\n## A\n```\n# A\n```\n### A\n")]).toEqual(["a", "a-1", "a-2"]);
  });
});

describe("dead links are found", () => {
  const files: Record<string, string> = {
    "docs/a.md": "# Title\n\n## Part two\n\n[ok](b.md#there) [ok](#part-two) [bad](c.md) [bad](b.md#nowhere) `[code](c.md)`\n",
    "docs/b.md": "# B\n\n## There\n",
  };
  const read = (path: string): string | undefined => files[path];
  it("names a missing file and a missing anchor, and ignores links in code", () => {
    expect(deadLinks("docs/a.md", read)).toEqual(["docs/a.md: c.md: no such file", "docs/a.md: b.md#nowhere: no heading with that anchor"]);
    expect(deadLinks("docs/b.md", read)).toEqual([]);
  });
});

describe("README.md and docs/", () => {
  const pages = ["README.md", ...markdownUnder("docs")];

  it("have no dead relative link (files and #anchors)", () => {
    expect(pages.flatMap((page) => deadLinks(page, readFromDisk))).toEqual([]);
  });

  it("link every docs page from the README", () => {
    const linked = new Set(
      linkTargets(readFileSync(join(root, "README.md"), "utf8"))
        .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
        .map((target) => join(decodeURIComponent(target.split("#")[0]!))),
    );
    expect(markdownUnder("docs").filter((page) => !linked.has(page))).toEqual([]);
  });

  it("keep the README short: at most 300 lines", () => {
    expect(readFileSync(join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(300);
  });
});
