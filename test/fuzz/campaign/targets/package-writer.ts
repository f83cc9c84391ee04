/**
 * The page's package writers (src/browser/prune-package/: prunePackage, over the neutral writer code the CLI
 * uses too, src/packages/write/ and src/packages/conda.ts) on small packages of every kind the page writes:
 * wheels and zips, `.conda`, `.deb` (control.tar with md5sums and Installed-Size), tarballs plain, gzip and
 * zstd, each holding real bundles prune edits (test/fixtures/bundler) among text, directories, symlinks, hard
 * links and long or pax names. Only OffloadKitError may escape. A package written back is put together from
 * the reply's parts as the page does and judged by an oracle made of other code: input and output walked
 * (src/packages/walk.ts) down to the writer's level, the same members in the same order, each member the
 * input's bytes or, where prune edits it, what pruneMember gives for the input's bytes; the bookkeeping that
 * names the edited files (a .deb's md5sums and Installed-Size, a wheel's RECORD, conda's paths.json) saying
 * their new bytes, every other line or row as it was. An unchanged package must be one range: the input.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { deflateRawSync, gunzipSync, gzipSync } from "node:zlib";
import { browserDecoders } from "../../../../src/browser/packages.js";
import { collect, decodedRange } from "../../../../src/browser/prune-package/decode.js";
import { isDebPackage } from "../../../../src/browser/prune-package/deb.js";
import { condaMembers } from "../../../../src/browser/prune-package/conda.js";
import { packageScope, prunePackage } from "../../../../src/browser/prune-package/index.js";
import { pruneMember } from "../../../../src/browser/prune-package/members.js";
import { tarballCompression } from "../../../../src/browser/prune-package/tarball.js";
import { isZipPackage } from "../../../../src/browser/prune-package/zip.js";
import { crc32 } from "../../../../src/inspector/zip.js";
import type { PruneReply } from "../../../../src/browser/protocol.js";
import { loadBrowserCodecs } from "../../../../src/compress/browser.js";
import type { Codecs } from "../../../../src/compress/codecs.js";
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { bytesSource, readExact } from "../../../../src/engine/source.js";
import { ChunkReader } from "../../../../src/packages/chunks.js";
import { compressionOf, memorySpooler } from "../../../../src/packages/decoders.js";
import type { Compression, Decoders } from "../../../../src/packages/decoders.js";
import { layerPath } from "../../../../src/packages/image.js";
import { walkTar } from "../../../../src/packages/tar.js";
import { walkPackage } from "../../../../src/packages/walk.js";
import { readZip } from "../../../../src/packages/zip.js";
import { parseSelection } from "../../../../src/prune/select.js";
import type { Rand } from "../rand.js";
import type { Field, Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";
import { Writer, endTar, paxRecords, writeTarEntry } from "./package-bytes.js";
import { walkBudget } from "./walk.js";

const utf8 = new TextEncoder();
const KEEP = ["gfx906"];

/**
 * Loaded when the module loads, not in `setup`: the campaign's main thread regenerates a failing case's input
 * (generate, which compresses with libzstd) without running setup.
 */
const codecs: Codecs = await loadBrowserCodecs();
/** As the writers prune a member, a package inside included; checked once, by prunePackage itself. */
const SCOPE = { ...packageScope(parseSelection("keep", KEEP), codecs), check: () => {} };
/**
 * Members prune edits or reads: host + gfx906 + gfx90a:xnack- (the gfx90a entry goes), gfx906 alone with
 * 4096 alignment (its gfx90a entry goes), host + gfx906 (matched, nothing to remove: kept as it is), a text
 * bundle (the same).
 */
const BUNDLES = ["align16.19.bc", "hip-only-align4096.19.bc", "host-gfx906.19.bc", "text.19.ll"].map((f) => new Uint8Array(readFileSync(`${process.cwd()}/test/fixtures/bundler/${f}`)));

// ---------------------------------------------------------------------------------------------------------
// Generators: each writes the package and the fields it wrote (sizes, offsets, checksums, names).

interface Member {
  readonly name: string;
  readonly kind: "file" | "dir" | "symlink" | "hardlink";
  readonly data: Uint8Array;
  readonly link?: string;
}

/** Names with bytes the writers must carry through: UTF-8 continuation bytes 0x80-0x9f, commas and quotes (RECORD's CSV), a long path. */
const ODD_NAMES = ["doc/\u0101\u0100.txt", "doc/a,b.txt", 'doc/q"uote.txt', `share/${"long-directory-name/".repeat(6)}notes.txt`, "doc/caf\u00e9.txt"];

/** The files of a package: 1-2 bundles, text, maybe a directory, a symlink, a hard link, an odd name; shuffled a little. */
function packageMembers(r: Rand, prefix: string): Member[] {
  const out: Member[] = [];
  const bundle = () => (r.bool(0.7) ? BUNDLES[0]! : r.pick(BUNDLES));
  if (r.bool(0.6)) out.push({ name: `${prefix}lib/`, kind: "dir", data: new Uint8Array(0) });
  out.push({ name: `${prefix}lib/libx.so`, kind: "file", data: bundle() });
  if (r.bool(0.4)) out.push({ name: r.bool(0.5) ? `${prefix}lib/liby.so` : `${prefix}lib/lib,y \u0101.so`, kind: "file", data: bundle() });
  out.push({ name: `${prefix}README`, kind: "file", data: utf8.encode(`readme ${r.int(1000)}\n`) });
  if (r.bool(0.5)) out.push({ name: prefix + r.pick(ODD_NAMES), kind: "file", data: r.bool(0.5) ? r.bytes(r.size(300)) : utf8.encode("text\n") });
  if (r.bool(0.4)) out.push({ name: `${prefix}lib/libx.so.1`, kind: "symlink", data: new Uint8Array(0), link: "libx.so" });
  if (r.bool(0.3)) out.push({ name: `${prefix}lib/libx-hard.so`, kind: "hardlink", data: new Uint8Array(0), link: `${prefix}lib/libx.so` });
  if (r.bool(0.2)) out.push({ name: `${prefix}empty`, kind: "file", data: new Uint8Array(0) });
  // A swap or two (a hard link may then come before its target, as in real tars).
  for (let k = r.int(3); k > 0; k--) {
    const i = r.int(out.length);
    const j = r.int(out.length);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const TAR_TYPE = { file: "0", dir: "5", symlink: "2", hardlink: "1" } as const;

/**
 * One valid entry in a random header flavour: ustar (a long path split into prefix and name), GNU long names,
 * pax (path, linkpath, mtime; sometimes the size too, which an edit cannot rewrite: TAR_SIZE_IN_PAX), GNU
 * base-256 size, v7. (package-bytes' randomTarEntry also writes broken ones; these must be valid.)
 */
function tarEntry(r: Rand, w: Writer, name: string, body: Uint8Array, type: string, linkName?: string): void {
  const long = utf8.encode(name).length > 100 || (linkName !== undefined && utf8.encode(linkName).length > 100);
  let flavour = r.int(6);
  if (long && (flavour === 0 || flavour === 3 || flavour === 5)) flavour = r.pick([1, 2, 4]);
  if (flavour === 4) {
    const cut = name.lastIndexOf("/", 100);
    if (!long || cut <= 0 || cut > 155 || utf8.encode(name.slice(cut + 1)).length > 100 || linkName !== undefined) flavour = 1;
    else return writeTarEntry(w, name.slice(cut + 1), body, { type, linkName, prefix: name.slice(0, cut) });
  }
  if (flavour === 1) return randomTarEntryGnu(w, name, body, type, linkName);
  if (flavour === 2) {
    const at = w.length + 512;
    const records: [string, string][] = [["path", name]];
    if (linkName !== undefined) records.push(["linkpath", linkName]);
    if (r.bool(0.2)) records.push(["mtime", "1700000000.5"]);
    const paxSize = r.bool(0.1);
    if (paxSize) records.push(["size", String(body.length)]);
    writeTarEntry(w, "PaxHeaders/x", paxRecords(records), { type: "x" });
    w.field(at, 3, "text");
    return writeTarEntry(w, utf8.encode(name).length > 100 ? "x" : name, body, { type, linkName: linkName !== undefined && utf8.encode(linkName).length > 100 ? "x" : linkName, size: paxSize && r.bool(0.5) ? 0 : undefined });
  }
  if (flavour === 3) return writeTarEntry(w, name, body, { type, linkName, base256: true, magic: "gnu" });
  if (flavour === 5) return writeTarEntry(w, name, body, { type, linkName, magic: "v7" });
  writeTarEntry(w, name, body, { type, linkName });
}

function randomTarEntryGnu(w: Writer, name: string, body: Uint8Array, type: string, linkName?: string): void {
  writeTarEntry(w, "././@LongLink", utf8.encode(`${name}\0`), { type: "L", magic: "gnu" });
  if (linkName !== undefined) writeTarEntry(w, "././@LongLink", utf8.encode(`${linkName}\0`), { type: "K", magic: "gnu" });
  writeTarEntry(w, name.slice(0, 99), body, { type, linkName: linkName?.slice(0, 99), magic: "gnu" });
}

/** A tar of `members` in random header flavours, the end blocks, sometimes the blocking factor's zeros. */
function tarOf(r: Rand, members: readonly Member[], dotSlash: boolean): Sample {
  const w = new Writer();
  for (const m of members) {
    const name = dotSlash ? `./${m.name}` : m.name;
    tarEntry(r, w, name, m.data, TAR_TYPE[m.kind], m.link === undefined ? undefined : m.kind === "hardlink" && dotSlash ? `./${m.link}` : m.link);
  }
  endTar(w);
  // Sometimes the blocking factor's zeros after the end blocks, as GNU tar writes them.
  if (r.bool(0.3)) w.push(new Uint8Array(512 * r.range(1, 6)));
  return w.sample();
}

/** `inner` placed in `w` with its fields moved to where it lands. */
function embed(w: Writer, inner: Sample): void {
  const at = w.length;
  w.push(inner.bytes);
  for (const f of inner.fields) w.fields.push({ ...f, at: f.at + at });
}

function compressTar(r: Rand, tar: Sample, method: Compression | undefined): Sample {
  if (method === "gzip") return { bytes: gzipSync(tar.bytes, { level: r.pick([1, 6, 9]) }), fields: [] };
  if (method === "zstd") {
    // One frame or several (dpkg-deb and zstd write one; a concatenation is still one stream to zstd -d).
    if (r.bool(0.3) && tar.bytes.length > 1024) {
      const cut = 512 * r.range(1, Math.floor(tar.bytes.length / 512) - 1);
      return { bytes: concat([codecs.zstdCompress(tar.bytes.subarray(0, cut), 3), codecs.zstdCompress(tar.bytes.subarray(cut), 3)]), fields: [] };
    }
    return { bytes: codecs.zstdCompress(tar.bytes, r.pick([1, 3, 19])), fields: [] };
  }
  return tar;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function hex(bytes: Uint8Array, algorithm: "md5" | "sha256"): string {
  return createHash(algorithm).update(bytes).digest("hex");
}

/** paths.json as conda-build writes it (Python's json.dumps, indent 2, sorted keys), for `files`. */
function pathsJson(r: Rand, files: readonly Member[], strip: string): Uint8Array {
  const rows = files.map((m) => {
    const row: Record<string, unknown> = { _path: m.name.slice(strip.length), path_type: m.kind === "symlink" ? "softlink" : "hardlink" };
    if (r.bool(0.95)) row.sha256 = hex(m.data, "sha256");
    if (r.bool(0.95)) row.size_in_bytes = m.data.length;
    return row;
  });
  const text = JSON.stringify({ paths: rows, paths_version: 1 }, null, r.bool(0.8) ? 2 : undefined);
  // Python escapes non-ASCII by default (ensure_ascii): the rewrite must keep the escapes.
  return utf8.encode(r.bool(0.5) ? text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) : text);
}

/** A tarball: plain, gzip or zstd; sometimes a legacy conda layout with info/paths.json before the files. */
function tarballSample(r: Rand): Sample {
  const files = packageMembers(r, r.bool(0.5) ? "usr/" : "");
  const all = [...files];
  if (r.bool(0.3)) all.unshift({ name: "info/paths.json", kind: "file", data: pathsJson(r, files.filter((m) => m.kind === "file"), "") });
  const tar = tarOf(r, all, r.bool(0.3));
  return compressTar(r, tar, r.pick([undefined, undefined, "gzip", "zstd"] as const));
}

/** One ar member header and body (dpkg's ar: name/ padded, decimal fields), with its fields. */
function arMember(w: Writer, name: string, body: Sample): void {
  const at = w.length;
  const header = `${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"100644".padEnd(8)}${String(body.bytes.length).padEnd(10)}\`\n`;
  w.push(utf8.encode(header));
  w.field(at, 16, "text");
  w.field(at + 48, 10, "size", { decimal: true });
  w.field(at + 58, 2, "magic");
  embed(w, body);
  if (body.bytes.length % 2 === 1) w.push([0x0a]);
}

/** A .deb: debian-binary, control.tar (control with Installed-Size, md5sums of every file), data.tar; each tar plain, gzip or zstd. */
function debSample(r: Rand): Sample {
  const files = packageMembers(r, "usr/");
  const regular = files.filter((m) => m.kind === "file");
  const kib = regular.reduce((n, m) => n + Math.ceil(m.data.length / 1024), 0);
  const control = utf8.encode(`Package: p\nVersion: 1.0\nArchitecture: amd64\nInstalled-Size: ${kib + r.int(20)}\nDescription: fuzz\n`);
  const md5sums = utf8.encode(regular.map((m) => `${hex(m.data, "md5")}  ${m.name}\n`).join(""));
  const controlMembers: Member[] = [{ name: "", kind: "dir", data: new Uint8Array(0) }, { name: "control", kind: "file", data: control }];
  if (r.bool(0.9)) controlMembers.push({ name: "md5sums", kind: "file", data: md5sums });
  const controlTar = new Writer();
  for (const m of controlMembers) writeTarEntry(controlTar, `./${m.name}`, m.data, { type: TAR_TYPE[m.kind] });
  endTar(controlTar);
  const methods = [undefined, "gzip", "zstd"] as const;
  const controlMethod = r.pick(methods);
  const dataMethod = r.pick(methods);
  const suffix = (m: Compression | undefined) => (m === undefined ? "" : m === "gzip" ? ".gz" : ".zst");
  const w = new Writer();
  w.push(utf8.encode("!<arch>\n"));
  w.field(0, 8, "magic");
  arMember(w, "debian-binary", { bytes: utf8.encode("2.0\n"), fields: [] });
  arMember(w, `control.tar${suffix(controlMethod)}`, compressTar(r, controlTar.sample(), controlMethod));
  arMember(w, `data.tar${suffix(dataMethod)}`, compressTar(r, tarOf(r, files, r.bool(0.7)), dataMethod));
  if (r.bool(0.15)) arMember(w, "_gpgorigin", { bytes: r.bytes(r.range(1, 40)), fields: [] });
  return w.sample();
}

function le(value: number, size: number): number[] {
  return Array.from({ length: size }, (_, i) => Math.floor(value / 2 ** (8 * i)) & 255);
}

interface ZipEntry {
  readonly name: string;
  readonly data: Uint8Array;
  readonly method: 0 | 8;
  readonly mode: number;
}

/** A zip of `entries` (local headers, central directory, end record), with every size, offset, CRC and name field. */
function zipOf(entries: readonly ZipEntry[]): Sample {
  const w = new Writer();
  const central: { bytes: number[]; fields: Field[] }[] = [];
  for (const e of entries) {
    const stored = e.method === 8 ? deflateRawSync(e.data) : e.data;
    const name = utf8.encode(e.name);
    const at = w.length;
    const crc = crc32(e.data);
    w.field(at, 4, "magic");
    w.field(at + 8, 2, "kind");
    w.field(at + 14, 4, "size");
    w.field(at + 18, 4, "size");
    w.field(at + 22, 4, "size");
    w.field(at + 26, 2, "size");
    w.field(at + 30, name.length, "text");
    w.push([0x50, 0x4b, 3, 4, ...le(20, 2), ...le(0x800, 2), ...le(e.method, 2), 0, 0, 0, 0, ...le(crc, 4), ...le(stored.length, 4), ...le(e.data.length, 4), ...le(name.length, 2), 0, 0, ...name]);
    w.push(stored);
    central.push({
      bytes: [0x50, 0x4b, 1, 2, ...le(0x314, 2), ...le(20, 2), ...le(0x800, 2), ...le(e.method, 2), 0, 0, 0, 0, ...le(crc, 4), ...le(stored.length, 4), ...le(e.data.length, 4),
        ...le(name.length, 2), 0, 0, 0, 0, 0, 0, 0, 0, ...le(e.mode * 65536, 4), ...le(at, 4), ...name],
      fields: [{ at: 10, size: 2, kind: "kind" }, { at: 16, size: 4, kind: "size" }, { at: 20, size: 4, kind: "size" }, { at: 24, size: 4, kind: "size" }, { at: 28, size: 2, kind: "size" }, { at: 38, size: 4, kind: "kind" }, { at: 42, size: 4, kind: "offset" }, { at: 46, size: name.length, kind: "text" }],
    });
  }
  const dirAt = w.length;
  for (const c of central) {
    const at = w.length;
    for (const f of c.fields) w.fields.push({ ...f, at: f.at + at });
    w.push(c.bytes);
  }
  const endAt = w.length;
  w.field(endAt + 8, 2, "count");
  w.field(endAt + 10, 2, "count");
  w.field(endAt + 12, 4, "size");
  w.field(endAt + 16, 4, "offset");
  w.push([0x50, 0x4b, 5, 6, 0, 0, 0, 0, ...le(entries.length, 2), ...le(entries.length, 2), ...le(endAt - dirAt, 4), ...le(dirAt, 4), 0, 0]);
  return w.sample();
}

function recordHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("base64url");
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** A wheel (RECORD listing every file, itself with empty hash and size) or, sometimes, a plain zip. */
function wheelSample(r: Rand): Sample {
  const files = packageMembers(r, "p/");
  const entries: ZipEntry[] = [];
  const mode = (m: Member) => (m.kind === "dir" ? 0o40755 : m.kind === "symlink" ? 0o120777 : 0o100644);
  for (const m of files) {
    if (m.kind === "hardlink") continue;
    entries.push({ name: m.name, data: m.kind === "symlink" ? utf8.encode(m.link!) : m.data, method: m.kind === "file" && r.bool(0.6) ? 8 : 0, mode: mode(m) });
  }
  if (r.bool(0.85)) {
    entries.push({ name: "p-1.0.dist-info/METADATA", data: utf8.encode("Metadata-Version: 2.1\nName: p\nVersion: 1.0\n"), method: 8, mode: 0o100644 });
    const newline = r.bool(0.2) ? "\r\n" : "\n";
    const rows = entries.filter((e) => !e.name.endsWith("/")).map((e) => `${csvField(e.name)},sha256=${recordHash(e.data)},${e.data.length}`);
    rows.push("p-1.0.dist-info/RECORD,,");
    entries.push({ name: "p-1.0.dist-info/RECORD", data: utf8.encode(rows.join(newline) + newline), method: r.bool(0.7) ? 8 : 0, mode: 0o100644 });
  }
  return zipOf(entries);
}

/** A .conda: a zip storing metadata.json, pkg-*.tar.zst (the files) and info-*.tar.zst (index.json, paths.json). */
function condaSample(r: Rand): Sample {
  const files = packageMembers(r, "");
  const info: Member[] = [
    { name: "info/index.json", kind: "file", data: utf8.encode('{"name": "p", "version": "1.0"}') },
    { name: "info/paths.json", kind: "file", data: pathsJson(r, files.filter((m) => m.kind === "file" || m.kind === "symlink"), "") },
  ];
  const zst = (tar: Sample) => codecs.zstdCompress(tar.bytes, r.pick([3, 19]));
  const entries: ZipEntry[] = [
    { name: "metadata.json", data: utf8.encode('{"conda_pkg_format_version": 2}'), method: 0, mode: 0o100644 },
    { name: "pkg-p-1.0-0.tar.zst", data: zst(tarOf(r, files, false)), method: 0, mode: 0o100644 },
    { name: "info-p-1.0-0.tar.zst", data: zst(tarOf(r, r.bool(0.5) ? info : [...info].reverse(), false)), method: 0, mode: 0o100644 },
  ];
  if (r.bool(0.5)) entries.push(entries.splice(1, 1)[0]!);
  return zipOf(entries);
}

function writerSample(r: Rand, nest = true): Sample {
  switch (r.int(nest ? 5 : 4)) {
    case 0: return tarballSample(r);
    case 1: return debSample(r);
    case 2: return wheelSample(r);
    case 3: return condaSample(r);
    default: return nestedSample(r);
  }
}

/**
 * Packages inside a package, as the writers meet them (a wheel or a .deb in a tarball, a tarball in a zip):
 * a tarball or a zip holding one or two packages of any kind beside its own files. The oracle judges each
 * inner package that changed as a package of its own (`judge`, recursively), not by the writers' own code.
 */
function nestedSample(r: Rand): Sample {
  const inner = Array.from({ length: r.range(1, 2) }, (_, i) => {
    const sample = writerSample(r, false);
    const source = bytesSource(sample.bytes);
    const ext = isZipPackage(source) ? (condaMembers(readZip(source)) !== undefined ? "conda" : "whl") : isDebPackage(source) ? "deb" : "tar";
    return { name: `pkgs/inner${i}.${ext}`, data: sample.bytes };
  });
  const own = packageMembers(r, "").filter((m) => m.kind !== "hardlink");
  if (r.bool(0.5)) {
    const members: Member[] = [...own, ...inner.map((m) => ({ name: m.name, kind: "file" as const, data: m.data }))];
    return compressTar(r, tarOf(r, members, r.bool(0.3)), r.pick([undefined, "gzip", "zstd"] as const));
  }
  const entries: ZipEntry[] = [...own.filter((m) => m.kind !== "symlink").map((m) => ({ name: m.name, data: m.data, method: m.kind === "file" && r.bool(0.5) ? (8 as const) : (0 as const), mode: m.kind === "dir" ? 0o40755 : 0o100644 })),
    ...inner.map((m) => ({ name: m.name, data: m.data, method: r.bool(0.5) ? (8 as const) : (0 as const), mode: 0o100644 }))];
  return zipOf(entries);
}

// ---------------------------------------------------------------------------------------------------------
// The oracle.

/** What prunePackage takes the input for (index.ts's order), and how deep the walk must go to reach the files it edits. */
async function kindOf(input: Uint8Array): Promise<{ kind: "zip" | "conda" | "deb" | "tarball"; ext: string; depth: number; method?: Compression } | undefined> {
  const source = bytesSource(input);
  try {
    if (isZipPackage(source)) {
      // zip (1) | conda: zip (1), zstd (2), tar (3)
      return condaMembers(readZip(source)) !== undefined ? { kind: "conda", ext: "conda", depth: 3 } : { kind: "zip", ext: "whl", depth: 1 };
    }
    if (isDebPackage(source)) {
      const method = debDataMethod(input);
      return { kind: "deb", ext: "deb", depth: method === undefined ? 1 : 2, method };
    }
  } catch (e) {
    if (e instanceof OffloadKitError) return undefined;
    throw e;
  }
  const tarball = await tarballCompression(source, codecs);
  if (tarball === undefined) return undefined;
  return { kind: "tarball", ext: tarball.compression === undefined ? "tar" : tarball.compression === "gzip" ? "tar.gz" : "tar.zst", depth: tarball.compression === undefined ? 1 : 2, method: tarball.compression };
}

interface ArPart {
  readonly name: string;
  readonly data: Uint8Array;
}

/** The ar members, read here (not with the writer's readDebMembers). */
function arParts(bytes: Uint8Array): ArPart[] {
  const out: ArPart[] = [];
  for (let at = 8; at + 60 <= bytes.length;) {
    const text = String.fromCharCode(...bytes.subarray(at, at + 60));
    const size = Number(text.slice(48, 58).trim());
    if (!Number.isSafeInteger(size) || size < 0) break;
    out.push({ name: text.slice(0, 16).trimEnd().replace(/\/$/, ""), data: bytes.subarray(at + 60, at + 60 + size) });
    at += 60 + size + (size % 2);
  }
  return out;
}

function debDataMethod(input: Uint8Array): Compression | undefined {
  const data = arParts(input).find((m) => m.name.startsWith("data.tar"));
  return data === undefined ? undefined : compressionOf(data.data.subarray(0, 16));
}

/** The walker's decoders without a subprocess: the platform's gzip and deflate, libzstd's WebAssembly for zstd (Node 20's DecompressionStream has none). */
function decoders(): Decoders {
  const platform = browserDecoders();
  return {
    decode(method, input) {
      if (method !== "zstd") return platform.decode(method, input);
      return (async function* () {
        const bytes = await collect(input, 1 << 30, "zstd");
        yield* decodedRange(bytesSource(bytes), 0, bytes.length, "zstd", codecs, "zstd");
      })();
    },
    inflateRaw: (input) => platform.inflateRaw(input),
  };
}

interface Walked {
  readonly members: { path: readonly string[]; bytes: Uint8Array }[];
  readonly problems: string[];
}

async function walked(bytes: Uint8Array, name: string, depth: number): Promise<Walked> {
  const out: Walked = { members: [], problems: [] };
  await walkPackage(bytesSource(bytes), name, {
    decoders: decoders(),
    spooler: memorySpooler(walkBudget(bytes.length)),
    maxDepth: depth,
    maxDecompressed: walkBudget(bytes.length),
    onMember: ({ path, source }) => {
      out.members.push({ path, bytes: readExact(source, 0, source.size).slice() });
    },
    onProblem: (p) => {
      out.problems.push(`${p.path.join("!")}: ${p.code}`);
    },
  });
  return out;
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function fail(message: string): never {
  throw new Error(`package-writer oracle: ${message}`);
}

const latin1 = (bytes: Uint8Array) => Array.from(bytes, (b) => String.fromCharCode(b)).join("");
const RECORD = /^[^/]+\.dist-info\/RECORD$/;

/** The first CSV field of a RECORD row, as Python's csv module reads it (raw UTF-8 bytes in, text out). */
function recordPath(line: string): string {
  if (!line.startsWith('"')) return line.slice(0, line.indexOf(",") < 0 ? line.length : line.indexOf(","));
  let value = "";
  for (let i = 1; i < line.length; i++) {
    if (line[i] === '"' && line[i + 1] === '"') {
      value += '"';
      i++;
    } else if (line[i] === '"') break;
    else value += line[i];
  }
  return value;
}

/** RECORD: the edited members' rows give their new hash and size, every other row byte for byte (bytes compared as latin1). */
function checkRecord(before: Uint8Array, after: Uint8Array, edited: ReadonlyMap<string, Uint8Array>): void {
  const a = latin1(before).split("\n");
  const b = latin1(after).split("\n");
  if (a.length !== b.length) fail(`RECORD has ${b.length} lines after, ${a.length} before`);
  const decode = (s: string) => new TextDecoder().decode(Uint8Array.from(s, (c) => c.charCodeAt(0)));
  a.forEach((line, i) => {
    const cr = line.endsWith("\r") ? "\r" : "";
    const row = cr ? line.slice(0, -1) : line;
    const now = row === "" ? undefined : edited.get(decode(recordPath(row)));
    if (now === undefined) {
      if (b[i] !== line) fail(`RECORD line ${i} changed: ${JSON.stringify(line)} -> ${JSON.stringify(b[i])}`);
      return;
    }
    const want = `${row.startsWith('"') ? csvRaw(row) : recordPath(row)},sha256=${recordHash(now)},${now.length}${cr}`;
    if (b[i] !== want) fail(`RECORD line ${i} of an edited member is ${JSON.stringify(b[i])}, not ${JSON.stringify(want)}`);
  });
}

/** A quoted first field of a row as written (through its closing quote). */
function csvRaw(row: string): string {
  for (let i = 1; i < row.length; i++) {
    if (row[i] === '"' && row[i + 1] === '"') i++;
    else if (row[i] === '"') return row.slice(0, i + 1);
  }
  return row;
}

/** paths.json: the edited files' rows give their new sha256 and size_in_bytes (where they had them); everything else as it was. */
function checkPathsJson(before: Uint8Array, after: Uint8Array, edited: ReadonlyMap<string, Uint8Array>): void {
  const a = JSON.parse(new TextDecoder().decode(before)) as { paths: Record<string, unknown>[] };
  const b = JSON.parse(new TextDecoder().decode(after)) as unknown;
  for (const row of a.paths) {
    const now = edited.get(String(row._path).replace(/^(\.?\/)+/, ""));
    if (now === undefined) continue;
    if ("sha256" in row) row.sha256 = hex(now, "sha256");
    if ("size_in_bytes" in row) row.size_in_bytes = now.length;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) fail(`paths.json is ${JSON.stringify(b).slice(0, 300)}, expected ${JSON.stringify(a).slice(0, 300)}`);
}

async function tarFiles(tar: Uint8Array): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const reader = ChunkReader.ofSource(bytesSource(tar));
  for await (const entry of walkTar(reader)) {
    if (entry.type === "file") out.set(layerPath(entry.name), tar.slice(entry.dataOffset, entry.dataOffset + entry.size));
  }
  return out;
}

async function controlFiles(deb: Uint8Array): Promise<Map<string, Uint8Array>> {
  const control = arParts(deb).find((m) => m.name.startsWith("control.tar"));
  if (control === undefined) fail("no control.tar");
  const method = compressionOf(control.data.subarray(0, 16));
  const tar = method === "gzip" ? new Uint8Array(gunzipSync(control.data)) : method === "zstd" ? await collect(decodedRange(bytesSource(control.data), 0, control.data.length, "zstd", codecs, "control"), 1 << 26, "control") : control.data;
  return tarFiles(tar);
}

/** md5sums: edited files' lines give their new md5, others as they were; Installed-Size lowered by the KiB saved. */
async function checkDebControl(input: Uint8Array, output: Uint8Array, edited: ReadonlyMap<string, { before: Uint8Array; after: Uint8Array }>): Promise<void> {
  const [a, b] = [await controlFiles(input), await controlFiles(output)];
  if ([...a.keys()].join("\n") !== [...b.keys()].join("\n")) fail(`control.tar holds ${[...b.keys()]}, not ${[...a.keys()]}`);
  const md5a = a.get("md5sums");
  if (md5a !== undefined) {
    const la = latin1(md5a).split("\n");
    const lb = latin1(b.get("md5sums")!).split("\n");
    if (la.length !== lb.length) fail("md5sums lost or gained lines");
    la.forEach((line, i) => {
      const match = /^([0-9a-f]{32})( [ *])(.*)$/.exec(line);
      const now = match === null ? undefined : edited.get(layerPath(new TextDecoder().decode(Uint8Array.from(match[3]!, (c) => c.charCodeAt(0)))));
      const want = now === undefined ? line : `${hex(now.after, "md5")}${match![2]}${match![3]}`;
      if (lb[i] !== want) fail(`md5sums line ${i} is ${JSON.stringify(lb[i])}, not ${JSON.stringify(want)}`);
    });
  }
  const size = (files: Map<string, Uint8Array>) => /^Installed-Size:[ \t]*(\d+)[ \t]*$/m.exec(latin1(files.get("control") ?? new Uint8Array(0)))?.[1];
  const before = size(a);
  if (before !== undefined) {
    const saved = [...edited.values()].reduce((n, e) => n + Math.ceil(e.before.length / 1024) - Math.ceil(e.after.length / 1024), 0);
    const want = String(Math.max(0, Number(before) - saved));
    if (size(b) !== want) fail(`Installed-Size ${size(b)}, not ${want}`);
  }
}

function assemble(input: Uint8Array, reply: PruneReply): Uint8Array {
  const parts = reply.parts.map((p) => {
    if ("bytes" in p) return p.bytes;
    if ("zeros" in p) return new Uint8Array(p.zeros);
    if (!Number.isSafeInteger(p.offset) || !Number.isSafeInteger(p.size) || p.offset < 0 || p.size < 0 || p.offset + p.size > input.length) fail(`part [${p.offset}, +${p.size}) outside the ${input.length}-byte input`);
    return input.subarray(p.offset, p.offset + p.size);
  });
  const out = concat(parts);
  if (out.length !== reply.outputSize) fail(`parts make ${out.length} bytes, the reply says ${reply.outputSize}`);
  return out;
}

async function judge(input: Uint8Array, output: Uint8Array, kind: NonNullable<Awaited<ReturnType<typeof kindOf>>>): Promise<number> {
  const name = `p.${kind.ext}`;
  const [before, after] = [await walked(input, name, kind.depth), await walked(output, name, kind.depth)];
  if (before.problems.length === 0 && after.problems.length > 0) fail(`the output has problems the input had not: ${after.problems.join("; ")}`);
  const paths = (w: Walked) => w.members.map((m) => m.path.join("!")).join("\n");
  if (paths(before) !== paths(after)) fail(`members differ:\n${paths(before)}\n---\n${paths(after)}`);
  // Which members the writer edits, and which hold its bookkeeping (checked below, against the edits).
  let editable = (path: readonly string[]) => path.length === 2;
  let ledger = (_path: readonly string[]) => false;
  if (kind.kind === "zip") {
    const record = readZip(bytesSource(input)).members.find((m) => RECORD.test(m.name));
    ledger = (path) => record !== undefined && path.length === 2 && path[1] === layerPath(record.name);
  } else if (kind.kind === "conda") {
    const index = readZip(bytesSource(input));
    const at = condaMembers(index)!;
    const [pkg, info] = [layerPath(index.members[at.pkg]!.name), layerPath(index.members[at.info]!.name)];
    editable = (path) => path.length === 3 && path[1] === pkg;
    ledger = (path) => path.length === 3 && path[1] === info && path[2] === "info/paths.json";
  } else if (kind.kind === "tarball") {
    ledger = (path) => path.length === 2 && path[1] === "info/paths.json";
  }
  const edited = new Map<string, { before: Uint8Array; after: Uint8Array }>();
  const ledgers: number[] = [];
  for (const [i, m] of before.members.entries()) {
    if (ledger(m.path)) {
      ledgers.push(i);
      continue;
    }
    let want = m.bytes;
    const written = after.members[i]!.bytes;
    // A package inside that was written again: judged as a package of its own, every level down.
    const inner = editable(m.path) && !same(written, m.bytes) ? await kindOf(m.bytes) : undefined;
    if (inner !== undefined) {
      await judge(m.bytes, written, inner);
      edited.set(m.path[m.path.length - 1]!, { before: m.bytes, after: written });
      continue;
    }
    if (editable(m.path)) {
      let edit;
      try {
        edit = await pruneMember(m.bytes, m.path.join("!"), SCOPE);
      } catch (e) {
        fail(`pruneMember refuses ${m.path.join("!")} (${e instanceof Error ? e.message : String(e)}), yet the package was written`);
      }
      if (edit?.output !== undefined) {
        want = edit.output;
        edited.set(m.path[m.path.length - 1]!, { before: m.bytes, after: edit.output });
      }
    }
    if (!same(after.members[i]!.bytes, want)) fail(`${m.path.join("!")}: ${after.members[i]!.bytes.length} bytes written, ${want === m.bytes ? "the input's" : "pruneMember's"} ${want.length} expected`);
  }
  const newBytes = new Map([...edited].map(([k, v]) => [k, v.after]));
  for (const i of ledgers) {
    const [a, b] = [before.members[i]!, after.members[i]!];
    if (edited.size === 0 ? !same(a.bytes, b.bytes) : false) fail(`${a.path.join("!")} changed with no member edited`);
    if (kind.kind === "zip") checkRecord(a.bytes, b.bytes, newBytes);
    else checkPathsJson(a.bytes, b.bytes, newBytes);
  }
  if (kind.kind === "deb") await checkDebControl(input, output, edited);
  if (edited.size === 0) fail("the package was written as changed, yet no member's bytes are pruneMember's");
  return edited.size;
}


async function run(input: Uint8Array): Promise<unknown> {
  const kind = await kindOf(input);
  let reply: PruneReply;
  try {
    reply = await prunePackage(bytesSource(input), `p.${kind?.ext ?? "bin"}`, KEEP, codecs);
  } catch (e) {
    // VERIFY_FAILED is the writer reading back what it wrote and finding it wrong: whatever the input, a writer bug.
    if (e instanceof OffloadKitError && e.code === "VERIFY_FAILED") fail(`the writer's own read-back failed: ${e.message}`);
    throw e;
  }
  const summary = { container: reply.container, changed: reply.changed, outputSize: reply.outputSize, kept: reply.kept, entries: reply.entries, notes: reply.notes.length };
  if (!reply.changed) {
    const [only] = reply.parts;
    if (reply.parts.length !== 1 || only === undefined || !("offset" in only) || only.offset !== 0 || only.size !== input.length) fail(`unchanged, yet the parts are not the input: ${JSON.stringify(reply.parts.map((p) => ("bytes" in p ? { bytes: p.bytes.length } : p)))}`);
    return summary;
  }
  if (kind === undefined) fail("a package the oracle does not take for one was written");
  const output = assemble(input, reply);
  return { ...summary, edited: await judge(input, output, kind) };
}

export const packageWriterTarget: FuzzTarget = {
  name: "package-writer",
  about: "the page's package writers (prunePackage: wheels/zips, .conda, .deb, tarballs plain/gzip/zstd) over real bundles; output walked and checked member by member against pruneMember, md5sums/Installed-Size, RECORD and paths.json",
  engines: false,
  sources: false,
  dictionary: ["gfx906", "gfx90a", "__CLANG_OFFLOAD_BUNDLE__", "info/paths.json", "p-1.0.dist-info/RECORD", "md5sums", "Installed-Size: ", "sha256=", '"size_in_bytes": ', "data.tar", "control.tar.gz", "pkg-x.tar.zst", "././@LongLink", "\u0101", ",", '"'],
  generate: writerSample,
  run: (input) => run(input),
  allocBudget: (length) => 2 * walkBudget(length) + 64 * 1024 * 1024,
};
