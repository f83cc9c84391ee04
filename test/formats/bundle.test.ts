import { describe, expect, it } from "vitest";
import {
  distinctEntries, layoutBinaryBundle, parseBinaryBundle, readBinaryBundle, writeBinaryBundle,
} from "../../src/formats/bundle.js";
import { latin1Encode } from "../../src/formats/bytes.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { ENGINE_KINDS, makeEngine } from "../engines.js";

const enc = (s: string) => latin1Encode(s);

// bundler.md §2.1, worked example [obs22], identical under 19: host + gfx906, payloads HOST and DEV.
const GOLDEN_HEX =
  "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f0200000000000000" +
  "8b000000000000000400000000000000" + "1e00000000000000" + Buffer.from("host-x86_64-unknown-linux-gnu-").toString("hex") +
  "8f000000000000000300000000000000" + "1d00000000000000" + Buffer.from("hip-amdgcn-amd-amdhsa--gfx906").toString("hex") +
  Buffer.from("HOSTDEV").toString("hex");
const GOLDEN = Uint8Array.from(Buffer.from(GOLDEN_HEX, "hex"));

describe("binary bundle writer", () => {
  it("reproduces the spec's worked example byte for byte", () => {
    const out = writeBinaryBundle([
      { id: "host-x86_64-unknown-linux-gnu-", data: enc("HOST") },
      { id: "hip-amdgcn-amd-amdhsa--gfx906", data: enc("DEV") },
    ]);
    expect(Buffer.from(out).toString("hex")).toBe(GOLDEN_HEX);
    expect(out.length).toBe(0x92);
  });

  it("pads in front of every payload, the first included (align 3 example of §2.2)", () => {
    // A 191-byte header: 32 + 3 * 24 = 104, so IDs totalling 87 bytes.
    const ids = ["a".repeat(29), "b".repeat(29), "c".repeat(29)];
    const layout = layoutBinaryBundle(ids.map((id, i) => ({ id, size: [4, 5, 2][i] })), 3);
    expect(layout.header.length).toBe(191);
    expect(layout.offsets).toEqual([192, 198, 204]);
    expect(layout.size).toBe(206);
  });

  it("refuses duplicate IDs and a zero alignment instead of writing a corrupt file", () => {
    expect(() => layoutBinaryBundle([{ id: "x", size: 1 }, { id: "x", size: 1 }])).toThrowError(OffloadKitError);
    expect(() => layoutBinaryBundle([{ id: "x", size: 1 }], 0)).toThrow(/alignment/);
  });
});

describe.each(ENGINE_KINDS)("binary bundle reader (%s)", (kind) => {
  const engine = makeEngine(kind, 4096);

  it("reads the golden bundle", () => {
    const entries = parseBinaryBundle(GOLDEN, { engine });
    expect(entries.map((e) => [e.id, e.offset, e.size, Buffer.from(e.data).toString()])).toEqual([
      ["host-x86_64-unknown-linux-gnu-", 0x8b, 4, "HOST"],
      ["hip-amdgcn-amd-amdhsa--gfx906", 0x8f, 3, "DEV"],
    ]);
  });

  it("treats a header that fails at its first entry as 'not a bundle', with the reason", () => {
    const cases: [Uint8Array, string | undefined][] = [
      [enc("not a bundle at all"), undefined],
      [GOLDEN.subarray(0, 23), undefined],
      [GOLDEN.subarray(0, 30), "BUNDLE_COUNT_TRUNCATED"],
      [GOLDEN.subarray(0, 36), "BUNDLE_OFFSET_TRUNCATED"],
      [GOLDEN.subarray(0, 44), "BUNDLE_SIZE_TRUNCATED"],
      [GOLDEN.subarray(0, 52), "BUNDLE_ID_LENGTH_TRUNCATED"],
      [GOLDEN.subarray(0, 60), "BUNDLE_ID_TRUNCATED"],
    ];
    for (const [bytes, code] of cases) {
      const read = readBinaryBundle(bytes, { engine });
      expect(read.kind).toBe("none");
      expect(read.kind === "none" && read.problem?.code).toBe(code ?? undefined);
    }
    const zero = GOLDEN.slice();
    zero.fill(0, 32, 40);
    const r = readBinaryBundle(zero, { engine });
    expect(r.kind === "none" && [r.problem?.code, r.problem?.offset]).toEqual(["BUNDLE_OFFSET_ZERO", 32]);
  });

  it("rejects a header that fails after a good entry (where LLVM segfaults)", () => {
    // Truncating in the middle of the second payload: entry 1's payload runs past the end.
    const cut = GOLDEN.subarray(0, GOLDEN.length - 1);
    try {
      readBinaryBundle(cut, { engine });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(OffloadKitError);
      expect((e as OffloadKitError).code).toBe("BUNDLE_PAYLOAD_OUT_OF_BOUNDS");
      expect((e as OffloadKitError).offset).toBe(86);
      expect((e as Error).message).toMatch(/bundle entry 1 .*offset 143, size 3.* 145-byte input/);
    }
  });

  it("keeps the last of repeated IDs at the first one's place, like LLVM's StringMap", () => {
    const bytes = writeBinaryBundle([
      { id: "a", data: enc("1") },
      { id: "b", data: enc("2") },
    ]);
    // Rename entry b to a.
    const patched = bytes.slice();
    patched[32 + 24 + 1 + 24] = 0x61;
    const read = readBinaryBundle(patched, { engine });
    expect(read.kind).toBe("bundle");
    if (read.kind !== "bundle") return;
    expect(read.bundle.entries.map((e) => e.id)).toEqual(["a", "a"]);
    expect(distinctEntries(read.bundle.entries).map((e) => [e.id, e.offset])).toEqual([["a", read.bundle.entries[1].offset]]);
  });

  it("walks a header bigger than the window", () => {
    const small = makeEngine(kind, 128);
    const entries = Array.from({ length: 300 }, (_, i) => ({ id: `hip-amdgcn-amd-amdhsa--gfx${900 + i}`, data: enc(`p${i}`) }));
    const bytes = writeBinaryBundle(entries, 7);
    const read = parseBinaryBundle(bytes, { engine: small });
    expect(read.map((e) => e.id)).toEqual(entries.map((e) => e.id));
    expect(read.map((e) => Buffer.from(e.data).toString())).toEqual(entries.map((e) => Buffer.from(e.data).toString()));
  });

  it("refuses an ID longer than the window, naming the field", () => {
    const small = makeEngine(kind, 128);
    const bytes = writeBinaryBundle([{ id: "h".repeat(200), data: enc("x") }]);
    const read = readBinaryBundle(bytes, { engine: small });
    expect(read.kind === "none" && [read.problem?.code, read.problem?.offset]).toEqual(["BUNDLE_ID_TOO_LONG", 48]);
  });
});
