/**
 * The ELF writer against committed llvm-objcopy-19 output (test/fixtures/objcopy/make-objcopy-fixtures.sh), so
 * the bytes are checked where no LLVM is installed; and its refusals of malformed input, each a typed error
 * with an offset, never a RangeError or a partial file.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { buildElfStringTable } from "../../src/llvm/string-table.js";
import { addSections, removeSections } from "../../src/objcopy/index.js";

const dir = new URL("../fixtures/objcopy/", import.meta.url).pathname;
const read = (name: string) => new Uint8Array(readFileSync(dir + name));
const P = "__CLANG_OFFLOAD_BUNDLE__";
const TARGETS = ["x86_64-linux-gnu", "i386-linux-gnu", "powerpc64-linux-gnu", "aarch64-linux-gnu"];

describe("src/objcopy against committed llvm-objcopy-19 output", () => {
  it.each(TARGETS)("%s: adds the bundle sections and removes them again byte for byte", (target) => {
    const sections = [
      { name: `${P}host-${target}-`, data: read("host.bin"), flags: "readonly,exclude" },
      { name: `${P}hip-amdgcn-amd-amdhsa--gfx906`, data: read("gfx906.bin"), flags: "readonly,exclude" },
      { name: `${P}openmp-nvptx64-nvidia-cuda--sm_70`, data: read("sm_70.bin"), flags: "readonly,exclude" },
    ];
    const fat = addSections(read(`${target}.o`), sections);
    expect(Buffer.from(fat).equals(read(`${target}.fat.o`))).toBe(true);
    expect(Buffer.from(removeSections(fat, (name) => name.startsWith(P))).equals(read(`${target}.host.o`))).toBe(true);
  });

  it("builds string tables in StringTableBuilder's order, sharing tails", () => {
    const table = buildElfStringTable([".rela.text", ".text", "", ".comment", "t", ".text"]);
    expect(Buffer.from(table.bytes).toString("latin1")).toBe("\0.rela.text\0.comment\0");
    expect(table.offsets.get(".text")).toBe(6);
    expect(table.offsets.get(".comment")).toBe(12);
    expect(table.offsets.get("t")).toBe(19); // the tail of ".comment", the string placed just before it
    expect(table.offsets.get("")).toBe(0);
  });

  it("refuses malformed objects with a typed error and the offending offset", () => {
    const good = read("x86_64-linux-gnu.o");
    const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const cases: [string, (b: Uint8Array) => Uint8Array][] = [
      ["truncated header", (b) => b.subarray(0, 30)],
      ["not ELF", (b) => { const c = b.slice(); c[1] = 0; return c; }],
      ["section table past the end", (b) => { const c = b.slice(); view(c).setBigUint64(40, BigInt(c.length - 10), true); return c; }],
      ["section count past the end", (b) => { const c = b.slice(); view(c).setUint16(60, 5000, true); return c; }],
      ["e_shstrndx out of range", (b) => { const c = b.slice(); view(c).setUint16(62, 400, true); return c; }],
      ["truncated file", (b) => b.subarray(0, b.length - 100)],
      ["program headers", (b) => { const c = b.slice(); view(c).setUint16(56, 1, true); return c; }],
    ];
    for (const [label, damage] of cases) {
      for (const run of [(b: Uint8Array) => addSections(b, [{ name: `${P}x`, data: Uint8Array.of(1) }]), (b: Uint8Array) => removeSections(b, () => false)]) {
        let error: unknown;
        try {
          run(damage(good));
        } catch (e) {
          error = e;
        }
        expect(error, label).toBeInstanceOf(OffloadKitError);
        expect((error as OffloadKitError).code, label).toMatch(/^OBJCOPY_/);
      }
    }
  });

  it("refuses a hostile alignment instead of allocating its padding", () => {
    const c = read("x86_64-linux-gnu.o").slice();
    const v = new DataView(c.buffer);
    const shoff = Number(v.getBigUint64(40, true));
    // Section 2's sh_addralign (a section with bytes after the header) set to 1 GiB.
    v.setBigUint64(shoff + 2 * 64 + 48, 1n << 30n, true);
    expect(() => addSections(c, [])).toThrow(/alignment padding/);
  });
});
