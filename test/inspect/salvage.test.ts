// A damaged binary bundle's intact entries (issue 20): the strict walk still rejects the bundle (no entry in
// `bundles`, the same problem as before), and the problem carries the entries a lenient reading of the header
// finds, each marked intact or not; on both engines, in a plain file and in an ELF .hip_fatbin, never inside
// a compressed bundle; a header cut mid-record stops the list there.
import { describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { bytesSource } from "../../src/engine/source.js";
import { locate } from "../../src/inspect/locate.js";
import { salvageBinaryBundle } from "../../src/inspect/salvage.js";
import { ENGINE_KINDS, makeEngine } from "../engines.js";
import { buildElf64 } from "./elf-builder.js";

const enc = (s: string) => new TextEncoder().encode(s);
const IDS = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"];
const bundle = writeBinaryBundle(IDS.map((id, i) => ({ id, data: enc(`payload ${i} `.repeat(10 + i)) })), 16);

describe.each(ENGINE_KINDS)("damaged bundles (%s engine)", (kind) => {
  const engine = makeEngine(kind, 1 << 16);

  it("lists the entries whose payloads survive a cut, marked intact, and the cut ones marked damaged", () => {
    const intact = locate(bytesSource(bundle), { engine });
    const entries = intact.bundles[0]!.entries;
    // Cut inside entry 2's payload: entries 0 and 1 intact, 2 and 3 not.
    const cut = entries[2]!.offset + 5;
    const found = locate(bytesSource(bundle.subarray(0, cut)), { engine });
    expect(found.bundles).toEqual([]);
    expect(found.problems).toHaveLength(1);
    expect(found.problems[0]!.code).toBe("BUNDLE_PAYLOAD_OUT_OF_BOUNDS");
    expect(found.problems[0]!.entries).toEqual(entries.map((e, i) => ({ id: e.id, offset: e.offset, size: e.size, intact: i < 2 })));
  });

  it("offsets from the file's start in a .hip_fatbin section", () => {
    const elf = buildElf64([{ name: ".hip_fatbin", data: bundle.subarray(0, bundle.length - 3), align: 4096 }]);
    const found = locate(bytesSource(elf), { engine });
    const problem = found.problems.find((p) => p.entries !== undefined)!;
    const payload = problem.entries!.filter((e) => e.intact).map((e) => new TextDecoder().decode(elf.subarray(e.offset, e.offset + e.size)));
    expect(payload).toEqual([0, 1, 2].map((i) => `payload ${i} `.repeat(10 + i)));
    expect(problem.entries!.map((e) => e.intact)).toEqual([true, true, true, false]);
  });
});

describe("salvageBinaryBundle", () => {
  it("stops at a record the header's bytes do not hold whole", () => {
    // The header holds the magic, the count and the records; cut in the third record's ID.
    const thirdId = new TextDecoder("latin1").decode(bundle).indexOf(IDS[2]!);
    expect(salvageBinaryBundle(bytesSource(bundle.subarray(0, thirdId + 4)), 0, thirdId + 4).map((e) => [e.id, e.intact])).toEqual([[IDS[0], false], [IDS[1], false]]);
    expect(salvageBinaryBundle(bytesSource(bundle.subarray(0, 20)), 0, 20)).toEqual([]);
  });

  it("reads a garbled count only as far as the records go", () => {
    const garbled = bundle.slice();
    new DataView(garbled.buffer).setUint32(28, 0xffff_ffff, true);
    expect(salvageBinaryBundle(bytesSource(garbled), 0, garbled.length).length).toBeLessThan(1000);
  });
});
