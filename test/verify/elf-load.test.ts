// The output checker (src/verify/): real files pass (Debian's librocrand1, the same pruned to gfx90a, the
// clang-19 fixtures, ls, libc); every check fails on a file mutated to break exactly what it checks.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { bytesSource } from "../../src/engine/source.js";
import { planPrune, pruneWith, transformWith } from "../../src/prune/index.js";
import { plannedEntries, verifySource } from "../../src/verify/index.js";
import { syntheticExecutable } from "../elf-edit/synthetic.js";
import { HANG_MS } from "../limits.js";
import { codes, dynamicEntry, getU64, installed, mutated, phdrs, section, setU16, setU32, setU64 } from "./elf.js";

const ROCRAND = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
const LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const LS = "/usr/bin/ls";
const FIXTURES = new URL("../fixtures/hosts/", import.meta.url).pathname;

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const PT_PHDR = 6;
const PT_TLS = 7;
const PT_NOTE = 4;
const PT_GNU_EH_FRAME = 0x6474e550;
const PT_GNU_RELRO = 0x6474e552;
const DT_STRTAB = 5;
const DT_SYMTAB = 6;
const DT_STRSZ = 10;

const synthetic = syntheticExecutable([[100, 200], [300, 50]]).bytes;

describe("real files pass", () => {
  it.each([LS, LIBC, ROCRAND])("%s", (path) => {
    const bytes = installed(path);
    if (bytes === undefined) return;
    expect(verifySource(bytesSource(bytes)).findings).toEqual([]);
  });

  it.each(["app", "fat.o", "omp.o", "libboth.a"])("test/fixtures/hosts/%s (clang 19)", (name) => {
    const report = verifySource(bytesSource(new Uint8Array(readFileSync(FIXTURES + name))));
    expect(report.findings).toEqual([]);
    if (name === "app") expect(report.kind).toBe("linked ELF");
  });

  it("the synthetic executable, and it pruned and compressed by the ELF editor", () => {
    expect(codes(synthetic)).toEqual([]);
    const pruned = pruneWith(synthetic, { keep: ["gfx90a"], codecs: nodeCodecs });
    expect(pruned.changed).toBe(true);
    expect(codes(pruned.output)).toEqual([]);
    expect(codes(transformWith(synthetic, { codecs: nodeCodecs }, "compress").output)).toEqual([]);
  });

  it("librocrand pruned to gfx90a holds exactly the planned entries, and a wrong expectation fails", () => {
    const bytes = installed(ROCRAND);
    if (bytes === undefined) return;
    const planned = planPrune(bytesSource(bytes), { keep: ["gfx90a"], codecs: nodeCodecs });
    const pruned = pruneWith(bytes, { keep: ["gfx90a"], codecs: nodeCodecs }).output;
    const expected = plannedEntries(planned)!;
    expect(expected.fatBinaries?.get(0)?.length).toBeGreaterThan(1);
    const report = verifySource(bytesSource(pruned), { expected });
    expect(report.findings).toEqual([]);
    expect(report.kind === "linked ELF" && report.fatBinaries.length).toBe(1);
    const wrong = new Map([[0, [...expected.fatBinaries!.get(0)!, "hipv4-amdgcn-amd-amdhsa--gfx1100"]]]);
    expect(codes(pruned, { expected: { fatBinaries: wrong } })).toEqual(["FAT_BINARY_ENTRIES"]);
    expect(codes(pruned, { expected: { fatBinaries: new Map([[1, []]]) } })).toEqual(["FAT_BINARY_MISSING"]);
    // The layout bug this checker was written for: a second edit left e_phoff past the end of the file.
    expect(codes(mutated(pruned, (b) => setU64(b, 32, b.length + 4096)))).toContain("PHDRS_PAST_EOF");
  }, HANG_MS);
});

describe("each check fails on a mutated synthetic executable", () => {
  const load = (b: Uint8Array, i: number) => phdrs(b).filter((p) => p.type === PT_LOAD)[i];
  const cases: [string, string, (b: Uint8Array) => void][] = [
    ["e_phentsize", "BAD_ELF_HEADER", (b) => setU16(b, 54, 57)],
    ["e_version", "BAD_ELF_HEADER", (b) => setU32(b, 20, 2)],
    ["e_phoff past the end", "PHDRS_PAST_EOF", (b) => setU64(b, 32, b.length - 8)],
    ["PT_LOAD past the end", "LOAD_PAST_EOF", (b) => {
      setU64(b, load(b, 1).at + 32, 0x10000);
      setU64(b, load(b, 1).at + 40, 0x10000);
    }],
    ["p_filesz > p_memsz", "LOAD_FILESZ_GT_MEMSZ", (b) => setU64(b, load(b, 1).at + 40, 0x10)],
    ["p_offset not congruent to p_vaddr", "LOAD_NOT_CONGRUENT", (b) => setU64(b, load(b, 1).at + 16, load(b, 1).vaddr + 0x10)],
    ["p_align not a power of 2", "LOAD_BAD_ALIGN", (b) => setU64(b, load(b, 1).at + 48, 0x1800)],
    ["PT_LOADs out of order", "LOADS_OUT_OF_ORDER", (b) => setU64(b, load(b, 1).at + 16, 0x300000)],
    ["PT_LOADs overlapping", "LOADS_OVERLAP", (b) => setU64(b, load(b, 1).at + 16, load(b, 0).vaddr + 0x5000)],
    ["program header table not mapped", "PHDRS_NOT_LOADED", (b) => {
      const first = load(b, 0);
      setU64(b, first.at + 8, 0x1000);
      setU64(b, first.at + 16, first.vaddr + 0x1000);
      setU64(b, first.at + 32, first.filesz - 0x1000);
      setU64(b, first.at + 40, first.memsz - 0x1000);
    }],
    ["section header table past the end", "SHDRS_PAST_EOF", (b) => setU64(b, 40, b.length - 64)],
    ["e_shstrndx", "BAD_SHSTRNDX", (b) => setU16(b, 62, 9)],
    ["section past the end", "SECTION_PAST_EOF", (b) => setU64(b, section(b, ".tail").at + 32, b.length)],
    ["sh_link", "BAD_SH_LINK", (b) => setU32(b, section(b, ".tail").at + 40, 99)],
    ["allocated section at another offset than its PT_LOAD maps", "SECTION_DISPLACED", (b) => setU64(b, section(b, ".tail").at + 24, section(b, ".tail").offset + 8)],
    ["allocated section outside every PT_LOAD", "SECTION_NOT_LOADED", (b) => setU64(b, section(b, ".tail").at + 16, 0x900000)],
    ["wrapper magic", "BAD_HIP_WRAPPER", (b) => setU32(b, section(b, ".hipFatBinSegment").offset, 0x12345678)],
    [".hipFatBinSegment size", "BAD_HIP_WRAPPER", (b) => setU64(b, section(b, ".hipFatBinSegment").at + 32, 25)],
    ["wrapper pointing inside a bundle", "WRAPPER_TARGET_NOT_A_BUNDLE", (b) => {
      const field = section(b, ".hipFatBinSegment").offset + 8;
      setU64(b, field, getU64(b, field) + 64);
    }],
    ["wrapper pointing outside .hip_fatbin", "WRAPPER_TARGET_OUTSIDE_FATBIN", (b) => setU64(b, section(b, ".hipFatBinSegment").offset + 8, section(b, ".tail").addr)],
    ["bundle header failing after its first entry", "BAD_FAT_BINARY", (b) => setU64(b, section(b, ".hip_fatbin").offset + 24, 1 << 20)],
  ];
  it.each(cases)("%s: %s", (_what, code, change) => {
    const bytes = mutated(synthetic, change);
    expect(codes(bytes)).toContain(code);
  });

  it("a compressed fat binary whose total size runs past its room", () => {
    const compressed = transformWith(synthetic, { codecs: nodeCodecs }, "compress").output;
    expect(codes(compressed)).toEqual([]);
    expect(codes(mutated(compressed, (b) => setU32(b, section(b, ".hip_fatbin").offset + 8, 1 << 24)))).toContain("FAT_BINARY_TRUNCATED");
    expect(codes(mutated(compressed, (b) => setU16(b, section(b, ".hip_fatbin").offset + 4, 9)))).toContain("BAD_FAT_BINARY");
  });
});

describe("each loader check fails on a mutated real file", () => {
  it("librocrand: PT_DYNAMIC outside its PT_LOAD, dynamic addresses and sizes, relocations, the wrapper's relocation", () => {
    const bytes = installed(ROCRAND);
    if (bytes === undefined) return;
    const dynamic = phdrs(bytes).find((p) => p.type === PT_DYNAMIC)!;
    const holder = phdrs(bytes).find((p) => p.type === PT_LOAD && p.vaddr <= dynamic.vaddr && dynamic.vaddr < p.vaddr + p.memsz)!;
    // A shrunk PT_LOAD leaves PT_DYNAMIC (and the sections after it) outside.
    const shrunk = mutated(bytes, (b) => {
      setU64(b, holder.at + 32, dynamic.vaddr - holder.vaddr);
      setU64(b, holder.at + 40, dynamic.vaddr - holder.vaddr);
    });
    const report = verifySource(bytesSource(shrunk));
    expect(report.findings.some((f) => f.code === "SEGMENT_NOT_LOADED" && f.subject === "PT_DYNAMIC")).toBe(true);

    expect(codes(mutated(bytes, (b) => setU64(b, dynamicEntry(b, DT_STRSZ) + 8, 1 << 30)))).toEqual(["DYNAMIC_NOT_LOADED"]);
    expect(codes(mutated(bytes, (b) => setU64(b, dynamicEntry(b, DT_SYMTAB) + 8, 0x7000000000)))).toEqual(["DYNAMIC_NOT_LOADED"]);
    expect(codes(mutated(bytes, (b) => setU64(b, dynamicEntry(b, DT_STRTAB) + 8, 0x7000000000)))).toEqual(["DYNAMIC_NOT_LOADED"]);

    // A relocation writing into the code segment.
    const text = phdrs(bytes).find((p) => p.type === PT_LOAD && (p.flags & 1) !== 0)!;
    const rela = section(bytes, ".rela.dyn");
    expect(codes(mutated(bytes, (b) => setU64(b, rela.offset, text.vaddr + 16)))).toEqual(["RELOCATION_NOT_WRITABLE"]);

    // The wrapper's R_X86_64_RELATIVE: its addend moved into the bundle, out of .hip_fatbin, or the relocation gone.
    const field = section(bytes, ".hipFatBinSegment").addr + 8;
    let entry = -1;
    for (let at = rela.offset; at < rela.offset + rela.size; at += 24) if (getU64(bytes, at) === field) entry = at;
    expect(entry).toBeGreaterThan(0);
    expect(codes(mutated(bytes, (b) => setU64(b, entry + 16, getU64(b, entry + 16) + 4096)))).toEqual(["WRAPPER_TARGET_NOT_A_BUNDLE"]);
    expect(codes(mutated(bytes, (b) => setU64(b, entry + 16, 0x1000)))).toEqual(["WRAPPER_TARGET_OUTSIDE_FATBIN"]);
    expect(codes(mutated(bytes, (b) => setU64(b, entry + 8, 0)))).toEqual(["WRAPPER_NOT_RELOCATED"]);
  }, HANG_MS);

  it.each([
    ["PT_INTERP", PT_INTERP], ["PT_NOTE", PT_NOTE], ["PT_TLS", PT_TLS], ["PT_GNU_EH_FRAME", PT_GNU_EH_FRAME], ["PT_GNU_RELRO", PT_GNU_RELRO], ["PT_DYNAMIC", PT_DYNAMIC],
  ])("libc: %s loaded at another displacement, or past the end", (name, type) => {
    const bytes = installed(LIBC);
    if (bytes === undefined) return;
    const segment = phdrs(bytes).find((p) => p.type === type)!;
    expect(segment).toBeDefined();
    const displaced = verifySource(bytesSource(mutated(bytes, (b) => setU64(b, segment.at + 8, segment.offset + 16)))).findings;
    expect(displaced.filter((f) => f.subject === name).map((f) => f.code)).toEqual(["SEGMENT_DISPLACED"]);
    const past = verifySource(bytesSource(mutated(bytes, (b) => setU64(b, segment.at + 8, b.length - 1)))).findings;
    expect(past.filter((f) => f.subject === name).map((f) => f.code)).toEqual(["SEGMENT_PAST_EOF"]);
  });

  it("ls: PT_PHDR that is not the program header table", () => {
    const bytes = installed(LS);
    if (bytes === undefined) return;
    const phdr = phdrs(bytes).find((p) => p.type === PT_PHDR)!;
    expect(codes(mutated(bytes, (b) => setU64(b, phdr.at + 32, phdr.filesz - 56)))).toEqual(["PHDR_MISMATCH"]);
  });
});
