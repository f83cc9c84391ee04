/**
 * The README's examples are the commands' real output (issue 27, item 1): every `$ offload-kit ...` line in its
 * plain fenced blocks is run on a copy of examples/sample and must print exactly the lines pasted under it. When a
 * command's wording changes, `node scripts/readme-examples.mjs --write` pastes the new output.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { examplesOf, runExamples } from "../../scripts/readme-examples.mjs";

interface Example {
  line: number;
  words: string[];
  shown: string;
  printed: string;
}

const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");

describe("README examples", () => {
  it("are found: ls, sizes, check, prune and compress on the sample", () => {
    const commands = (examplesOf(readme) as Example[]).map((example) => example.words.slice(0, 2).join(" "));
    expect(commands).toEqual(expect.arrayContaining(["offload-kit ls", "offload-kit sizes", "offload-kit check", "offload-kit prune", "offload-kit compress"]));
  });

  it("print what the README shows", () => {
    const ran = runExamples(examplesOf(readme)) as Example[];
    const differing = ran.filter((example) => example.printed !== example.shown).map((example) => `README.md:${example.line}: $ ${example.words.join(" ")}\n${example.printed}`);
    expect(differing).toEqual([]);
  });

  it("would notice a pasted line that is not what the command prints", () => {
    const altered = readme.replace("hipv4-amdgcn-amd-amdhsa--gfx906               1  2,078  39.8", "hipv4-amdgcn-amd-amdhsa--gfx906               1  2,078  40.0");
    expect(altered).not.toBe(readme);
    const ran = runExamples(examplesOf(altered)) as Example[];
    expect(ran.filter((example) => example.printed !== example.shown).map((example) => example.words[1])).toEqual(["sizes"]);
  });
});
