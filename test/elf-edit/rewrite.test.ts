// The .hip_fatbin rewrite on byte-built executables (no compiler needed): what moves, what stays at the
// same address with the same bytes, and the refusals (each naming what and where, nothing written).
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bytesSource } from "../../src/engine/source.js";
import { keepBundleEntries } from "../../src/elf-edit/compose.js";
import { PT_LOAD, openLinkedElf } from "../../src/elf-edit/elf64.js";
import { readHipFatbinLayout } from "../../src/elf-edit/hip-fatbin.js";
import type { FatbinBundle } from "../../src/elf-edit/hip-fatbin.js";
import { rewriteHipFatbinFile } from "../../src/elf-edit/node.js";
import { rewriteHipFatbin } from "../../src/elf-edit/rewrite.js";
import type { RewriteOptions } from "../../src/elf-edit/rewrite.js";
import { parseBinaryBundle, writeBinaryBundle } from "../../src/formats/bundle.js";
import { BASE, loadedBytes, syntheticExecutable } from "./synthetic.js";

const keep = (id: string): boolean => id.startsWith("host-") || id.endsWith("gfx90a");
const prune: RewriteOptions = { bundles: (b: FatbinBundle) => keepBundleEntries(b.source, keep) };

function rewrite(bytes: Uint8Array, options: RewriteOptions = prune) {
  const parts: Uint8Array[] = [];
  const plan = rewriteHipFatbin(bytesSource(bytes), { write: (chunk) => parts.push(chunk.slice()) }, options);
  return { plan, output: Buffer.concat(parts) };
}

function wrapperTargets(file: Uint8Array): number[] {
  const layout = readHipFatbinLayout(openLinkedElf(bytesSource(file)));
  return layout.wrappers.map((w) => w.target);
}

function patchU16(bytes: Uint8Array, at: number, value: number): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setUint16(at, value, true);
  return copy;
}

function patchU64(bytes: Uint8Array, at: number, value: number): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setBigUint64(at, BigInt(value), true);
  return copy;
}

describe("rewriting .hip_fatbin", () => {
  const sizes = [
    [9000, 9000, 9000],
    [20000, 5000, 12000],
  ];

  it("packs the kept entries, frees whole pages, keeps every other byte at its address", () => {
    const input = syntheticExecutable(sizes);
    const { plan, output } = rewrite(input.bytes);
    expect(plan.split).toBe(true);
    // An executable's table grows in place when the file has room after it (here it does: .hip_fatbin
    // starts a page later), so the kernel and every strip tool find it where linkers put it.
    expect(plan.phdrTableMoved).toBe(false);
    expect(plan.shift % 4096).toBe(0);
    expect(plan.shift).toBeGreaterThan(0);
    expect(output.length).toBe(input.bytes.length - plan.shift);

    const elf = openLinkedElf(bytesSource(output));
    expect(elf.programHeaders.filter((p) => p.type === PT_LOAD)).toHaveLength(3);
    // The tail keeps its address and bytes; the wrappers point at the moved bundles, which hold only gfx90a.
    expect(Buffer.from(loadedBytes(output, input.tailAddress, 200)!)).toEqual(Buffer.from(loadedBytes(input.bytes, input.tailAddress, 200)!));
    const targets = wrapperTargets(output);
    expect(targets).toEqual(plan.bundles.map((m) => m.newAddress));
    targets.forEach((target, i) => {
      const fatbin = elf.sections.find((s) => s.name === ".hip_fatbin")!;
      const at = fatbin.offset + (target - fatbin.addr);
      const entries = parseBinaryBundle(output.subarray(at, at + plan.bundles[i].newSize));
      expect(entries.map((e) => e.id)).toEqual(["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a"]);
      const original = parseBinaryBundle(input.bundles[i]).find((e) => e.id.endsWith("gfx90a"))!;
      expect(Buffer.from(entries[1].data)).toEqual(Buffer.from(original.data));
    });
    // Program headers: loaded where the kernel looks for them.
    expect([elf.phoff, elf.programHeaders.length]).toEqual([64, 3]);
    expect(elf.programHeaders.some((p) => p.type === PT_LOAD && p.offset <= elf.phoff && elf.phoff + 3 * 56 <= p.offset + p.filesz)).toBe(true);
  });

  it("gives a library's longer table a PT_LOAD of its own past the end of the file", () => {
    const input = syntheticExecutable(sizes);
    const library = patchU16(input.bytes, 16, 3); // ET_DYN, no PT_INTERP: a shared library
    const { plan, output } = rewrite(library);
    expect([plan.split, plan.phdrTableMoved]).toEqual([true, true]);
    const elf = openLinkedElf(bytesSource(output));
    const loads = elf.programHeaders.filter((p) => p.type === PT_LOAD);
    expect(loads).toHaveLength(4);
    const table = loads[3];
    // After the section header table, above every address, congruent with where the last segment's
    // contents end (where GNU strip will put it), and the table's bytes are what it maps.
    expect(table.offset).toBe(elf.phoff);
    expect(elf.phoff).toBeGreaterThanOrEqual(elf.shoff + elf.sections.length * 64);
    expect(table.filesz).toBe(4 * 56);
    expect(table.offset + table.filesz).toBe(output.length);
    expect(table.vaddr).toBeGreaterThanOrEqual(loads[2].vaddr + loads[2].memsz);
    expect(table.vaddr % 4096).toBe((loads[2].vaddr + loads[2].filesz) % 4096);
    expect(table.offset % 4096).toBe(table.vaddr % 4096);
    expect(output.length).toBe(plan.outputSize);
    expect(output.length).toBeLessThan(library.length - plan.shift + 4096 + 4 * 56);
    expect(Buffer.from(loadedBytes(output, input.tailAddress, 200)!)).toEqual(Buffer.from(loadedBytes(library, input.tailAddress, 200)!));
  });

  it("uses a spare PT_NULL program header instead of moving the table", () => {
    const input = syntheticExecutable(sizes, 1);
    const { plan, output } = rewrite(input.bytes);
    expect(plan.split).toBe(true);
    expect(plan.phdrTableMoved).toBe(false);
    const elf = openLinkedElf(bytesSource(output));
    expect(elf.phoff).toBe(64);
    expect(elf.programHeaders.map((p) => p.type)).toEqual([PT_LOAD, PT_LOAD, PT_LOAD]);
    expect(Buffer.from(loadedBytes(output, input.tailAddress, 200)!)).toEqual(Buffer.from(loadedBytes(input.bytes, input.tailAddress, 200)!));
  });

  it("gives the input back byte for byte when nothing is replaced", () => {
    const input = syntheticExecutable(sizes);
    const { plan, output } = rewrite(input.bytes, {});
    expect(plan.shift).toBe(0);
    expect(Buffer.compare(output, input.bytes)).toBe(0);
  });

  it("keeps the layout (shift 0) when less than a page would be freed", () => {
    const input = syntheticExecutable([[100, 100]]);
    // The same bundle with its last payload 99 bytes shorter.
    const smaller = writeBinaryBundle(
      parseBinaryBundle(input.bundles[0]).map((e, i, all) => ({ id: e.id, data: i === all.length - 1 ? e.data.subarray(99) : e.data })),
      4096,
    );
    expect(input.bundles[0].length - smaller.length).toBe(99);
    const { plan, output } = rewrite(input.bytes, { bundles: () => bytesSource(smaller) });
    expect(plan.shift).toBe(0);
    expect(output.length).toBe(input.bytes.length);
    expect(wrapperTargets(output)).toEqual([BASE + input.fatbinOffset]);
    expect(parseBinaryBundle(output.subarray(input.fatbinOffset)).map((e) => e.id)).toHaveLength(3);
  });

  it("frees the page a gap of just over one page holds (part two starts in part one's last file page)", () => {
    const input = syntheticExecutable([[100, 100]]);
    const { plan, output } = rewrite(input.bytes);
    expect(plan.shift).toBe(4096);
    expect(output.length).toBe(input.bytes.length - 4096);
    expect(Buffer.from(loadedBytes(output, input.tailAddress, 200)!)).toEqual(Buffer.from(loadedBytes(input.bytes, input.tailAddress, 200)!));
  });

  it("moves .hip_fatbin to a new PT_LOAD at the end of the file when the new bundles no longer fit", () => {
    const input = syntheticExecutable([[9000, 9000], [5000, 5000]]);
    const bigger = writeBinaryBundle([{ id: "hipv4-amdgcn-amd-amdhsa--gfx942", data: new Uint8Array(40_000).fill(0x5a) }], 4096);
    const { plan, output } = rewrite(input.bytes, { bundles: (b) => (b.index === 0 ? bytesSource(bigger) : undefined) });
    expect(plan.relocated).toBe(true);
    expect(plan.shift).toBeGreaterThan(0);
    const elf = openLinkedElf(bytesSource(output));
    const loads = elf.programHeaders.filter((p) => p.type === PT_LOAD);
    const last = loads[loads.length - 1];
    // The old section's pages left the file; the new segment maps the bundles past every old address.
    expect(last.offset % 4096).toBe(0);
    expect(last.offset + last.filesz).toBe(output.length);
    // An executable's table grows in place (two more entries: part two and the new segment).
    expect([elf.phoff, elf.programHeaders.length]).toEqual([64, 4]);
    const targets = wrapperTargets(output);
    expect(targets[0]).toBeGreaterThanOrEqual(last.vaddr);
    expect(Buffer.from(loadedBytes(output, targets[0], bigger.length)!)).toEqual(Buffer.from(bigger));
    expect(Buffer.from(loadedBytes(output, targets[1], input.bundles[1].length)!)).toEqual(Buffer.from(input.bundles[1]));
    expect(Buffer.from(loadedBytes(output, input.tailAddress, 200)!)).toEqual(Buffer.from(loadedBytes(input.bytes, input.tailAddress, 200)!));
    const fatbin = elf.sections.find((s) => s.name === ".hip_fatbin")!;
    expect([fatbin.addr, fatbin.size]).toEqual([targets[0], plan.fatbin.newSize]);
  });

  it("refuses replacements that are not bundles", () => {
    const input = syntheticExecutable([[9000, 9000]]);
    expect(() => rewrite(input.bytes, { bundles: () => bytesSource(new Uint8Array(100)) })).toThrow(
      expect.objectContaining({ code: "REPLACEMENT_NOT_A_BUNDLE" }),
    );
  });
});

describe("bad input: a clear error naming what and where", () => {
  const input = syntheticExecutable([[9000, 9000, 9000]]);
  const wrapperField = input.wrapperOffset + 8;
  const cases: [string, Uint8Array, string, RegExp, number | undefined][] = [
    ["a wrapper pointing into the middle of a bundle", patchU64(input.bytes, wrapperField, BASE + input.fatbinOffset + 8), "WRAPPER_TARGET_NOT_A_BUNDLE", /__hip_fatbin_wrapper 0 points to 0x401008.*where no offload bundle/, input.fatbinOffset + 8],
    ["a wrapper pointing outside .hip_fatbin", patchU64(input.bytes, wrapperField, 0x1234), "WRAPPER_TARGET_NOT_A_BUNDLE", /points to 0x1234, outside \.hip_fatbin/, wrapperField],
    ["a wrapper without the HIPF magic", patchU64(input.bytes, input.wrapperOffset, 0), "BAD_HIP_WRAPPER", /__hip_fatbin_wrapper 0 at 0x[0-9a-f]+ .* has magic 0x0/, input.wrapperOffset],
    ["a 32-bit ELF", Uint8Array.from(input.bytes, (v, i) => (i === 4 ? 1 : v)), "ELF_UNSUPPORTED", /ELF class 1 at offset 4 \(EI_CLASS\)/, 4],
    ["a big-endian ELF", Uint8Array.from(input.bytes, (v, i) => (i === 5 ? 2 : v)), "ELF_UNSUPPORTED", /data encoding 2 at offset 5 \(EI_DATA\)/, 5],
    ["a missing section table", patchU64(input.bytes, 40, 0), "ELF_NO_SECTIONS", /no section header table \(e_shoff is 0\)/, 40],
  ];
  cases.push(["an offset past 2^53", patchU64(input.bytes, 40, 2 ** 60), "ELF_VALUE_TOO_LARGE", /0x1000000000000000 at file offset 40 is past 2\^53/, 40]);
  const noPhdrs = input.bytes.slice();
  new DataView(noPhdrs.buffer).setUint16(56, 0, true);
  cases.push(["no program headers", noPhdrs, "ELF_NO_PROGRAM_HEADERS", /no program headers/, 32]);
  // .hip_fatbin's sh_size made to run past the end of the file.
  const shoff = Number(new DataView(input.bytes.buffer).getBigUint64(40, true));
  cases.push(["a truncated .hip_fatbin", patchU64(input.bytes, shoff + 64 + 32, input.bytes.length), "HIP_FATBIN_TRUNCATED", /\.hip_fatbin \(file offset 0x1000, \d+ bytes\) runs past the end/, input.fatbinOffset]);
  cases.push(["a .hip_fatbin alignment that is not a power of two", patchU64(input.bytes, shoff + 64 + 48, 3), "BAD_HIP_FATBIN", /sh_addralign 3 is not a power of two/, shoff + 64 + 48]);
  cases.push(["a segment alignment past 16 MiB", patchU64(input.bytes, 64 + 48, 2 ** 30), "ELF_UNSUPPORTED", /p_align 1073741824, not a power of two/, 64 + 48]);
  // The bundle's last payload made to end past .hip_fatbin (the section cut short before it).
  cases.push(["a bundle cut short by its section", patchU64(input.bytes, shoff + 64 + 32, 9000), "HIP_FATBIN_TRUNCATED", /the fat binary at 0x401000 \(file offset 0x1000\) runs past the 9000 bytes/, undefined]);

  it.each(cases)("%s", (_name, bytes, code, message, offset) => {
    let error: unknown;
    try {
      rewrite(bytes);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code });
    // Where the offending field is (for the cut-short bundle: the entry whose payload runs out, which is not fixed here).
    if (offset !== undefined) expect(error).toMatchObject({ offset });
    else expect((error as { offset: number }).offset).toBeGreaterThan(input.fatbinOffset);
    expect((error as Error).message).toMatch(message);
  });

  it("writes nothing when the input is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-elf-edit-bad-"));
    try {
      const bad = join(dir, "bad.so");
      writeFileSync(bad, cases[0][1]);
      const out = join(dir, "out.so");
      expect(() => rewriteHipFatbinFile(bad, out, prune)).toThrow(expect.objectContaining({ code: "WRAPPER_TARGET_NOT_A_BUNDLE" }));
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(dir)).toEqual(["bad.so"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
