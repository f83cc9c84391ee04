// Replays every input the fuzz campaign ever saved (test/fixtures/fuzz/<parser>/): each once failed a check
// (crash, hang, engine disagreement, round trip, allocation); each must now pass all of them, on the
// window size and source kind it failed with and on the others.
import { describe, expect, it } from "vitest";
import { installAllocationWatch } from "./campaign/alloc.js";
import { checkInput } from "./campaign/check.js";
import { loadCorpus } from "./campaign/corpus.js";
import { targetNamed } from "./campaign/targets.js";

installAllocationWatch();
const corpus = loadCorpus();

describe("fuzz corpus replay", () => {
  it("has entries, each for a parser the campaign knows", () => {
    expect(corpus.length).toBeGreaterThan(0);
    for (const entry of corpus) expect(targetNamed(entry.parser), entry.file).toBeDefined();
  });

  it.each(corpus.map((entry) => [entry.file.replace(/^.*fixtures\//, ""), entry] as const))("%s", async (_name, entry) => {
    const target = targetNamed(entry.parser)!;
    await target.setup?.();
    for (const [capacity, chunked] of [[entry.capacity, entry.chunked], [96, true], [65536, false]] as const) {
      const failure = await checkInput(target, entry.bytes, capacity, chunked);
      expect(failure, `window ${capacity}, chunked ${chunked}`).toBeUndefined();
    }
  });
});
