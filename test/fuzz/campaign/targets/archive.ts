/** `ar` archives: member walk and name resolution (readArchive, both engines), and extracted member names. */
import { deviceMemberName } from "../../../../src/bundler/archive.js";
import { readArchive, writeArchive } from "../../../../src/formats/archive.js";
import type { ArchiveIndex } from "../../../../src/formats/archive.js";
import { bytesSource } from "../../../../src/engine/source.js";
import { plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { latin1, u32 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789._-/ #";
const NAMES = ["/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED", "#1/", "#1/20", "/0", "/99", "../x", "/etc/passwd", "a\0b", "`\n", "9999999999", "ECSYMBOLS"];

function randomName(r: Rand): string {
  if (r.bool(0.1)) return r.pick(["../../escape.o", "/abs/member.o", "dir/sub/m.o", ".."]);
  let name = r.text(r.bool(0.5) ? r.range(1, 14) : r.range(16, 45), NAME_CHARS);
  if (name.startsWith("/") || name.startsWith("#") || name.startsWith(" ")) name = `m${name}`;
  return name.replace(/\s+$/, "") || "m";
}

function header(name: string, size: number): string {
  return `${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"644".padEnd(8)}${String(size).padEnd(10)}\`\n`;
}

function bsdArchive(r: Rand): string {
  let text = "!<arch>\n";
  const members = [{ name: "__.SYMDEF SORTED", data: "\0\0\0\0\0\0\0\0" }];
  for (let i = r.int(4); i > 0; i--) members.push({ name: randomName(r).replace(/\//g, "_"), data: r.text(r.size(20), "xyz\0\n") });
  for (const m of members) {
    const name = m.name + "\0".repeat(r.int(4));
    text += header(`#1/${name.length}`, name.length + m.data.length) + name + m.data;
    if (text.length % 2) text += "\n";
  }
  return text;
}

function thinArchive(r: Rand): string {
  const names = Array.from({ length: r.range(1, 3) }, () => `dir/${randomName(r)}`);
  let table = "";
  const offsets = names.map((n) => {
    const at = table.length;
    table += `${n}/\n`;
    return at;
  });
  let text = `!<thin>\n${header("//", table.length)}${table}`;
  if (text.length % 2) text += "\n";
  names.forEach((_, i) => (text += header(`/${offsets[i]}`, 1000 + i)));
  return text;
}

/** Every member header's name and size fields, the symbol table's count and offsets (walked from the bytes). */
function fieldsOf(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  const thin = bytes[2] === 0x74;
  let at = 8;
  while (at + 60 <= bytes.length) {
    fields.push({ at, size: 16, kind: "text" }, { at: at + 48, size: 10, kind: "size", decimal: true }, { at: at + 58, size: 2, kind: "magic" });
    const name = String.fromCharCode(...bytes.subarray(at, at + 16)).trimEnd();
    const size = Number(String.fromCharCode(...bytes.subarray(at + 48, at + 58)).trim());
    if (name === "/" && at + 64 <= bytes.length) {
      fields.push(u32(at + 60, "count", true));
      for (let k = 0; k < 3 && at + 68 + 4 * k <= bytes.length; k++) fields.push(u32(at + 64 + 4 * k, "offset", true));
    }
    if (name.startsWith("#1/")) fields.push({ at: at + 3, size: 13, kind: "size", decimal: true });
    const data = thin && name !== "/" && name !== "//" ? 0 : size;
    if (!Number.isFinite(data)) break;
    at += 60 + data + ((60 + data) % 2 === 1 && !thin ? 1 : 0);
  }
  return fields;
}

function archiveSample(r: Rand): Sample {
  const shape = r.int(6);
  let bytes: Uint8Array;
  if (shape === 4) bytes = latin1(bsdArchive(r));
  else if (shape === 5) bytes = latin1(thinArchive(r));
  else {
    const members = Array.from({ length: r.int(5) }, () => ({
      name: randomName(r),
      data: r.bytes(r.size(40)),
      symbols: r.bool(0.5) ? null : Array.from({ length: r.int(3) }, () => randomName(r).replace(/\0/g, "")),
    }));
    bytes = writeArchive(members);
  }
  return { bytes, fields: fieldsOf(bytes) };
}

function read(input: Uint8Array, ctx: RunContext): ArchiveIndex {
  return readArchive(ctx.chunked ? chunkedSource(input) : bytesSource(input), { engine: ctx.engine });
}

export const archiveTarget: FuzzTarget = {
  name: "archive",
  about: "ar member walk and names (readArchive: GNU, BSD, COFF, thin; both engines), device member names",
  engines: true,
  sources: true,
  magic: latin1("!<arch>\n"),
  dictionary: NAMES,
  generate: archiveSample,
  run(input, ctx) {
    const index = read(input, ctx);
    const names = index.members.map((m) => deviceMemberName(m.name, "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx906"));
    // Extracted members are named from the last component of archive member names: never a way up.
    for (const name of names) if (name.startsWith("../") || name.includes("/../")) throw new Error(`device member name '${name}' climbs out`);
    return { index, names };
  },
  roundTrip(input, ctx) {
    const first = read(input, ctx);
    if (first.thin || first.kind === "coff") return undefined;
    // LLVM's GNU writer cannot represent every name its reader returns, and neither can ours: a "\n"
    // ends a long name early, a trailing blank is trimmed on reading, and a first member named
    // "__.SYMDEF..." is taken for a BSD symbol table, and a name "#1..." is written "#1/..." and read back
    // as a BSD long name.
    const first0 = first.members[0]?.name ?? "";
    if (first0.startsWith("__.SYMDEF") || first.members.some((m) => m.name.startsWith("#1"))) return undefined;
    if (first.members.some((m) => m.name.includes("\n") || m.name === "" || m.name.endsWith("/") || m.name.endsWith(" "))) return undefined;
    const members = first.members.map((m) => ({ name: m.name, data: input.subarray(m.dataOffset, m.dataOffset + m.size), symbols: null }));
    const written = writeArchive(members);
    const again = readArchive(written, { engine: ctx.engine });
    const back = again.members.map((m) => ({ name: m.name, data: written.subarray(m.dataOffset, m.dataOffset + m.size), symbols: null }));
    return JSON.stringify(plain(back)) === JSON.stringify(plain(members)) ? undefined : "members differ after writeArchive";
  },
};
