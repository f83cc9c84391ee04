// The archive format module: LLVM 19's writer layout (names, `//` table, symbol table, padding,
// /SYM64/), the reader's name rules and messages, and the archive symbols of ELF and bitcode members.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { layoutArchive, readArchive, unpackSymbols, writeArchive, writeEscaped } from "../../src/formats/archive.js";
import { latin1Decode, latin1Encode } from "../../src/formats/bytes.js";
import { bytesSource } from "../../src/engine/source.js";
import { listElfBundleEntries, openElf } from "../../src/formats/elf.js";
import { archiveMemberSymbols as packedSymbols, symbolicKind } from "../../src/formats/symbols.js";
import type { ByteSource } from "../../src/engine/source.js";

/** The member symbols with the names unpacked, for readable expectations. */
function archiveMemberSymbols(source: ByteSource): unknown {
  const result = packedSymbols(source);
  return result.kind === "symbols" ? { kind: "symbols", names: unpackSymbols(result.symbols) } : result;
}
import { ENGINE_KINDS, makeEngine } from "../engines.js";

const text = (s: string) => latin1Encode(s);
const header = (name: string, size: number, perms = "644") =>
  `${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${perms.padEnd(8)}${String(size).padEnd(10)}\`\n`;

describe("writing (LLVM 19, K_GNU, deterministic)", () => {
  it("an empty archive is the magic alone", () => {
    expect(latin1Decode(writeArchive([]))).toBe("!<arch>\n");
  });

  it("short names inline, long names and names with '/' in the // table, deduplicated, odd sizes padded", () => {
    const out = latin1Decode(writeArchive([
      { name: "short.o", data: text("abc"), symbols: null },
      { name: "sixteen-chars.bc", data: text("xy"), symbols: null },
      { name: "a/b", data: text(""), symbols: null },
      { name: "sixteen-chars.bc", data: text("z"), symbols: null },
    ]));
    const table = "sixteen-chars.bc/\na/b/\n";
    expect(out).toBe("!<arch>\n" +
      `${"//".padEnd(48)}${String(table.length + 1).padEnd(10)}\`\n${table}\n` +
      `${header("short.o/", 3)}abc\n` +
      `${header("/0", 2)}xy` +
      `${header("/18", 0)}` +
      `${header("/0", 1)}z\n`);
  });

  it("pads an odd string table with a newline", () => {
    const out = latin1Decode(writeArchive([{ name: "seventeen-chars.o", data: text("q"), symbols: null }]));
    expect(out.slice(8, 68)).toBe(`${"//".padEnd(48)}${"20".padEnd(10)}\`\n`);
    expect(out.slice(68, 88)).toBe("seventeen-chars.o/\n\n");
  });

  it("writes a symbol table of member offsets when a member is symbolic", () => {
    const out = writeArchive([
      { name: "a.o", data: text("1234"), symbols: ["f", "g"] },
      { name: "b.o", data: text("5"), symbols: null },
      { name: "c.o", data: text("67"), symbols: ["h"] },
    ]);
    const s = latin1Decode(out);
    // 4 + 3 * 4 + "f\0g\0h\0" = 22 bytes.
    expect(s.slice(8, 68)).toBe(header("/", 22, "0"));
    const view = new DataView(out.buffer);
    expect(view.getUint32(68)).toBe(3);
    const first = 8 + 60 + 22;
    expect([view.getUint32(72), view.getUint32(76), view.getUint32(80)]).toEqual([first, first, first + 64 + 62]);
    expect(s.slice(84, 90)).toBe("f\0g\0h\0");
    expect(s.slice(first, first + 64)).toBe(`${header("a.o/", 4)}1234`);
  });

  it("symbolic members without symbols still get a table of three NULs; non-symbolic ones none", () => {
    const out = latin1Decode(writeArchive([{ name: "a.o", data: text("x"), symbols: [] }]));
    expect(out.slice(8, 68 + 8)).toBe(`${header("/", 8, "0")}\0\0\0\0\0\0\0\0`);
    expect(latin1Decode(writeArchive([{ name: "a.o", data: text("x"), symbols: null }]))).toBe(`!<arch>\n${header("a.o/", 1)}x\n`);
  });

  it("switches to /SYM64/ when a member header lies past the threshold", () => {
    const members = [{ name: "a.o", data: text("12"), symbols: ["f"] }, { name: "b.o", data: text("34"), symbols: ["g"] }];
    const layout = layoutArchive(members.map((m) => ({ name: m.name, size: m.data.length, symbols: m.symbols })), { sym64Threshold: 100 });
    expect(layout.kind).toBe("gnu64");
    const out = writeArchive(members, { sym64Threshold: 100 });
    expect(latin1Decode(out.subarray(8, 24))).toBe("/SYM64/         ");
    const view = new DataView(out.buffer);
    expect(view.getBigUint64(68)).toBe(2n);
    expect(readArchive(out).kind).toBe("gnu64");
    expect(readArchive(out).members.map((m) => m.name)).toEqual(["a.o", "b.o"]);
  });

  it("refuses members the 10-digit size field cannot describe", () => {
    expect(() => layoutArchive([{ name: "big", size: 1e10, symbols: null }])).toThrow("File big exceeds size limit");
  });
});

describe.each(ENGINE_KINDS)("reading (%s engine)", (kind) => {
  const engine = makeEngine(kind, 256);

  it("BSD archives: __.SYMDEF, #1/ names with NUL padding, names ending at a space", () => {
    const archive = text("!<arch>\n" + header("#1/20", 28) + "__.SYMDEF SORTED\0\0\0\0" + "\0".repeat(8) +
      header("#1/12", 15) + "long_name.o\0abc\n" + header("x y/", 2) + "hi");
    const index = readArchive(archive, { engine });
    expect(index.kind).toBe("bsd");
    expect(index.symbolTable).toEqual({ offset: 68 + 20, size: 8 });
    expect(index.members.map((m) => [m.name, m.size])).toEqual([["long_name.o", 3], ["x", 2]]);
  });

  it("COFF-style archives: two symbol tables, NUL-terminated long names", () => {
    const archive = text("!<arch>\n" + header("/", 4) + "\0\0\0\0" + header("/", 4) + "\0\0\0\0" +
      header("//", 10) + "long.objx\0" + header("/0", 2) + "ab");
    const index = readArchive(archive, { engine });
    expect(index.kind).toBe("coff");
    expect(index.members.map((m) => m.name)).toEqual(["long.objx"]);
  });

  it("recognises thin archives", () => {
    const archive = text("!<thin>\n" + header("//", 10) + "dir/x.o/\n\n" + header("/0", 1234));
    const index = readArchive(archive, { engine });
    expect(index.thin).toBe(true);
    expect(index.members).toEqual([{ index: 1, headerOffset: 78, name: "dir/x.o", dataOffset: 138, size: 0, thin: true }]);
  });

  it("words long-name errors as LLVM does", () => {
    const past = text("!<arch>\n" + header("//", 4) + "ab/\n" + header("a.o/", 0) + header("/9", 0));
    expect(() => readArchive(past, { engine })).toThrow(
      "truncated or malformed archive (long name offset 9 past the end of the string table for archive member header at offset 132)");
    const open = text("!<arch>\n" + header("//", 4) + "abcd" + header("/0", 0));
    expect(() => readArchive(open, { engine })).toThrow("truncated or malformed archive (string table at long name offset 0 not terminated)");
    const first = text("!<arch>\n" + header("/12", 0));
    expect(() => readArchive(first, { engine })).toThrow("Invalid data was encountered while parsing the file");
    const regularSym64 = text("!<arch>\n" + header("a.o/", 0) + header("/SYM64/", 0));
    expect(() => readArchive(regularSym64, { engine })).toThrow(/'SYM64\/' for archive member header at offset 68/);
  });

  it("reports a missing magic and a truncated header", () => {
    expect(() => readArchive(text("not an archive"), { engine })).toThrow("file too small to be an archive");
    expect(() => readArchive(text("!<arch>\nabcdefghijklmnopqrst"), { engine })).toThrow(
      "truncated or malformed archive (remaining size of archive too small for next archive member header for abcdefghijklmnop)");
  });

  it("accepts a last odd-sized member without its padding byte (LLVM stops there quietly)", () => {
    const index = readArchive(text("!<arch>\n" + header("a.o/", 3) + "abc"), { engine });
    expect(index.members.map((m) => [m.name, m.size])).toEqual([["a.o", 3]]);
  });
});

describe("write_escaped", () => {
  it("escapes like raw_ostream::write_escaped", () => {
    expect(writeEscaped('a\\b\t\n"\x01\xff')).toBe('a\\\\b\\t\\n\\"\\001\\377');
  });
});

// A minimal ELF64 relocatable: sections [null, .shstrtab, .strtab, .symtab, extra...].
function makeElf(machine: number, symbols: { name: string; bind: number; type: number; shndx: number }[], extra: { name: string; data: Uint8Array }[] = []): Uint8Array {
  const names = ["", ".shstrtab", ".strtab", ".symtab", ...extra.map((e) => e.name)];
  let shstr = "";
  const nameOffsets = names.map((n) => {
    const at = shstr.length;
    shstr += `${n}\0`;
    return at;
  });
  let strtab = "\0";
  const symNames = symbols.map((s) => {
    const at = strtab.length;
    strtab += `${s.name}\0`;
    return at;
  });
  const symtab = new Uint8Array(24 * (symbols.length + 1));
  const sv = new DataView(symtab.buffer);
  symbols.forEach((s, i) => {
    const at = 24 * (i + 1);
    sv.setUint32(at, symNames[i], true);
    symtab[at + 4] = (s.bind << 4) | s.type;
    sv.setUint16(at + 6, s.shndx, true);
  });
  const blobs = [new Uint8Array(0), latin1Encode(shstr), latin1Encode(strtab), symtab, ...extra.map((e) => e.data)];
  let offset = 64;
  const offsets = blobs.map((b) => {
    const at = offset;
    offset += b.length;
    offset = Math.ceil(offset / 8) * 8;
    return at;
  });
  const shoff = offset;
  const out = new Uint8Array(shoff + 64 * blobs.length);
  const v = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  v.setUint16(16, 1, true);
  v.setUint16(18, machine, true);
  v.setBigUint64(40, BigInt(shoff), true);
  v.setUint16(58, 64, true);
  v.setUint16(60, blobs.length, true);
  v.setUint16(62, 1, true);
  blobs.forEach((b, i) => {
    out.set(b, offsets[i]);
    if (i === 0) return;
    const at = shoff + 64 * i;
    v.setUint32(at, nameOffsets[i], true);
    v.setUint32(at + 4, i === 3 ? 2 : i <= 2 ? 3 : 1, true);
    v.setBigUint64(at + 24, BigInt(offsets[i]), true);
    v.setBigUint64(at + 32, BigInt(b.length), true);
    if (i === 3) {
      v.setUint32(at + 40, 2, true);
      v.setBigUint64(at + 56, 24n, true);
    }
  });
  return out;
}

describe("member symbols", () => {
  it("ELF: global defined symbols in table order; locals, undefined, section and file symbols left out", () => {
    const elf = makeElf(224, [
      { name: "file.c", bind: 0, type: 4, shndx: 0xfff1 },
      { name: "local", bind: 0, type: 2, shndx: 1 },
      { name: "sect", bind: 1, type: 3, shndx: 1 },
      { name: "kernel", bind: 1, type: 2, shndx: 1 },
      { name: "undef", bind: 1, type: 0, shndx: 0 },
      { name: "weak", bind: 2, type: 1, shndx: 2 },
    ]);
    expect(archiveMemberSymbols(bytesSource(elf))).toEqual({ kind: "symbols", names: ["kernel", "weak"] });
  });

  it("ELF: mapping symbols are format-specific on AArch64", () => {
    const elf = makeElf(183, [{ name: "$x.1", bind: 1, type: 0, shndx: 1 }, { name: "f", bind: 1, type: 2, shndx: 1 }]);
    expect(archiveMemberSymbols(bytesSource(elf))).toEqual({ kind: "symbols", names: ["f"] });
  });

  it("ELF: bundle entries are the __CLANG_OFFLOAD_BUNDLE__ sections, in section order", () => {
    const elf = makeElf(62, [], [
      { name: "__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-", data: new Uint8Array([0]) },
      { name: ".text", data: text("code") },
      { name: "__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906", data: text("dev") },
    ]);
    expect(listElfBundleEntries(openElf(bytesSource(elf))).map((e) => [e.id, e.size])).toEqual([
      ["host-x86_64-unknown-linux-gnu-", 1], ["hip-amdgcn-amd-amdhsa--gfx906", 3],
    ]);
  });

  it("ELF: LLVM's messages for a section table past the end", () => {
    const elf = makeElf(224, []);
    new DataView(elf.buffer).setBigUint64(40, 1000000n, true);
    expect(() => archiveMemberSymbols(bytesSource(elf))).toThrow("section header table goes past the end of the file: e_shoff = 0xf4240");
  });

  it("bitcode: the irsymtab's global definitions; unreadable bitcode is a warning", () => {
    const archive = readFileSync(new URL("../fixtures/archive/hda-gfx906.19.a", import.meta.url));
    const member = readArchive(archive).members[0];
    const bitcode = archive.subarray(member.dataOffset, member.dataOffset + member.size);
    expect(archiveMemberSymbols(bytesSource(bitcode))).toEqual({ kind: "symbols", names: ["device_fn", "calls_ext", "gvar", "__oclc_ABI_version"] });
    expect(archiveMemberSymbols(bytesSource(text("BC\xc0\xde garbage garbage")))).toEqual({ kind: "unreadable", message: "Malformed block" });
    expect(archiveMemberSymbols(bytesSource(text("BC\xc0\xde123")))).toEqual({ kind: "unreadable", message: "Invalid bitcode signature" });
  });

  it("classifies files as identify_magic + isSymbolicFile do", () => {
    const kind = (bytes: number[] | string) => symbolicKind(typeof bytes === "string" ? text(bytes) : new Uint8Array(bytes), bytes.length);
    expect(kind("plain text")).toBe("none");
    expect(kind("__CLANG_OFFLOAD_BUNDLE__")).toBe("none");
    expect(kind("!<arch>\n")).toBe("none");
    expect(kind([0x64, 0x86, 0, 0])).toBe("other");
    expect(kind([0, 0, 1, 2])).toBe("other");
    expect(kind([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])).toBe("other");
    expect(kind([0x7f, 0x45, 0x4c, 0x46, 2, 1])).toBe("none");
    expect(kind("BC\xc0\xde")).toBe("bitcode");
    expect(() => archiveMemberSymbols(bytesSource(new Uint8Array([0x64, 0x86, 0, 0])))).toThrow(/not supported/);
  });
});
