// Locating a member as it streams (src/inspect/stream-locate.ts): the answer equals the spooled member's,
// for ELF files laid out in odd orders, whatever the chunking of the decoded stream; members the capture
// cannot answer for are decoded again and spooled (never guessed), and those it does not take are spooled
// as before.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { bytesSource } from "../../src/engine/source.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { captureMember, isCaptureMiss } from "../../src/inspect/stream-locate.js";
import { nodeDecoders } from "../../src/packages/node/io.js";
import { memorySpooler } from "../../src/packages/decoders.js";
import type { Decoders, Spooler } from "../../src/packages/decoders.js";
import { walkPackage } from "../../src/packages/walk.js";
import type { PackageProblem } from "../../src/packages/walk.js";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { haveTools, located, tarEntry, tarOf, tool } from "./build.js";

type Part =
  | { readonly name: string; readonly bytes?: Uint8Array; readonly type?: number; /** Holds the section names (as `.shstrtab` always does). */ readonly names?: true }
  | { readonly table: true };

const SHT_PROGBITS = 1;
const SHT_STRTAB = 3;

/** A little-endian ELF64 file whose sections and section table lie in the order given (`.shstrtab`, or the part marked `names`, filled in). */
function elf(parts: readonly Part[], options: { noTable?: boolean; machine?: number; osabi?: number; abiVersion?: number; flags?: number } = {}): Uint8Array {
  const sections = parts.filter((p): p is Exclude<Part, { table: true }> => !("table" in p));
  let names = "\0";
  const nameOffsets = sections.map((s) => {
    const at = names.length;
    names += `${s.name}\0`;
    return at;
  });
  const isNames = (s: { name: string; names?: true }) => s.name === ".shstrtab" || s.names === true;
  const contents = sections.map((s) => (isNames(s) ? new TextEncoder().encode(names) : s.bytes ?? new Uint8Array(0)));
  const tableSize = (sections.length + 1) * 64;
  const offsets: number[] = [];
  let tableOffset = 0;
  let position = 64;
  let k = 0;
  for (const part of parts) {
    position = Math.ceil(position / 8) * 8;
    if ("table" in part) {
      tableOffset = position;
      if (!options.noTable) position += tableSize;
    } else {
      offsets.push(position);
      position += contents[k++]!.length;
    }
  }
  const out = new Uint8Array(position);
  const view = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, options.osabi ?? 0, options.abiVersion ?? 0]);
  view.setUint16(16, 3, true);
  view.setUint16(18, options.machine ?? 62, true);
  view.setUint32(20, 1, true);
  view.setUint32(48, options.flags ?? 0, true);
  view.setUint16(52, 64, true);
  view.setUint16(58, 64, true);
  if (!options.noTable) {
    view.setBigUint64(40, BigInt(tableOffset), true);
    view.setUint16(60, sections.length + 1, true);
    view.setUint16(62, sections.findIndex(isNames) + 1, true);
  }
  sections.forEach((s, i) => {
    out.set(contents[i]!, offsets[i]!);
    if (options.noTable) return;
    const at = tableOffset + (i + 1) * 64;
    view.setUint32(at, nameOffsets[i]!, true);
    view.setUint32(at + 4, s.type ?? (isNames(s) ? SHT_STRTAB : SHT_PROGBITS), true);
    view.setBigUint64(at + 24, BigInt(offsets[i]!), true);
    view.setBigUint64(at + 32, BigInt(contents[i]!.length), true);
  });
  return out;
}

/** Bytes that hold no magic (a counter pattern). */
function filler(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 7 + seed) & 0x7f;
  return out;
}

const MAGIC = new TextEncoder().encode("__CLANG_OFFLOAD_BUNDLE__");

/** A payload with the bundle magic inside it (payloads are never searched). */
function payload(size: number, seed: number): Uint8Array {
  const out = filler(size, seed);
  out.set(MAGIC, size >> 1);
  return out;
}

/** A `.hip_fatbin` section: two bundles, each starting at a 4096 boundary as the toolchain places them. */
function fatbin(): Uint8Array {
  const one = writeBinaryBundle([{ id: "host-x86_64-unknown-linux-gnu-", data: new Uint8Array(0) }, { id: "hipv4-amdgcn-amd-amdhsa--gfx90a", data: payload(70_000, 3) }], 4096);
  const two = writeBinaryBundle([{ id: "host-x86_64-unknown-linux-gnu-", data: new Uint8Array(0) }, { id: "hipv4-amdgcn-amd-amdhsa--gfx1030", data: payload(50_000, 5) }], 4096);
  const out = new Uint8Array(Math.ceil(one.length / 4096) * 4096 + two.length);
  out.set(one);
  out.set(two, Math.ceil(one.length / 4096) * 4096);
  return out;
}

/** A `.rodata` holding a whole valid bundle: data, not device code (the locator's honest verdict), never reported. */
function rodataWithBundle(size = 20_000): Uint8Array {
  const out = filler(size, 9);
  const bundle = writeBinaryBundle([{ id: "hipv4-amdgcn-amd-amdhsa--gfx900", data: filler(3000, 11) }]);
  out.set(bundle, 1000);
  out.set(MAGIC, 8000);
  return out;
}

/** The decoder's output cut into pieces of awkward sizes (a magic or header across every kind of boundary). */
function rechunked(decoders: Decoders, sizes: readonly number[]): Decoders {
  return {
    ...decoders,
    async *decode(method, input) {
      let k = 0;
      for await (const chunk of decoders.decode(method, input)) {
        for (let at = 0; at < chunk.length;) {
          const n = Math.min(sizes[k++ % sizes.length]!, chunk.length - at);
          yield chunk.subarray(at, at + n);
          at += n;
        }
      }
    },
  };
}

interface Run {
  readonly members: Map<string, unknown>;
  readonly streamed: number;
  readonly spooled: number;
}

async function walkGz(file: Uint8Array, options: { stream: boolean; sizes?: readonly number[] }): Promise<Run> {
  const pkg = gzipSync(tarOf([tarEntry("usr/lib/libx.so", file), tarEntry("usr/share/doc/readme", new TextEncoder().encode("text\n"))]));
  const members = new Map<string, unknown>();
  let spooled = 0;
  const memory = memorySpooler();
  const spooler: Spooler = {
    spool(chunks, size, name) {
      spooled++;
      return memory.spool(chunks, size, name);
    },
  };
  const decoders = options.sizes === undefined ? nodeDecoders() : rechunked(nodeDecoders(), options.sizes);
  const walk = await walkPackage(bytesSource(pkg), "pkg.tar.gz", {
    decoders,
    spooler,
    onMember: ({ path, source }) => {
      members.set(path.slice(1).join("!"), located(source));
    },
    ...(options.stream ? { streamMembers: { minSize: 1024, start: captureMember, missed: isCaptureMiss } } : {}),
  });
  expect(walk).toBeDefined();
  return { members, streamed: walk!.streamed, spooled };
}

const CHUNKINGS: readonly (readonly number[] | undefined)[] = [undefined, [1, 3, 17, 4099, 65_536], [23, 24, 25], [4096]];

async function expectSameAsSpooled(file: Uint8Array, streamed: 0 | 1): Promise<Map<string, unknown>> {
  const spooled = await walkGz(file, { stream: false });
  expect(spooled.streamed).toBe(0);
  for (const sizes of CHUNKINGS) {
    const run = await walkGz(file, { stream: true, sizes });
    expect(run.members, `chunks ${sizes?.join(",") ?? "as decoded"}`).toEqual(spooled.members);
    expect(run.streamed).toBe(streamed);
  }
  return spooled.members;
}

function bundlesOf(members: Map<string, unknown>, key = "usr/lib/libx.so"): { section?: string; entries: { id: string }[] }[] {
  return (members.get(key) as { bundles: { section?: string; entries: { id: string }[] }[] }).bundles;
}

describe("locating a streamed member", () => {
  it("the usual layout (sections, names, then the table): streamed, the same finds, only in .hip_fatbin", async () => {
    const file = elf([
      { name: ".text", bytes: filler(200_000) },
      { name: ".rodata", bytes: rodataWithBundle() },
      { name: ".hip_fatbin", bytes: fatbin() },
      { name: ".data", bytes: filler(5000, 2) },
      { name: ".shstrtab" },
      { table: true },
    ]);
    const members = await expectSameAsSpooled(file, 1);
    const bundles = bundlesOf(members);
    expect(bundles.map((b) => b.section)).toEqual([".hip_fatbin", ".hip_fatbin"]);
    expect(bundles.flatMap((b) => b.entries.map((e) => e.id))).not.toContain("hipv4-amdgcn-amd-amdhsa--gfx900");
  });

  it("the section table before the sections, names after it: streamed", async () => {
    const file = elf([{ table: true }, { name: ".hip_fatbin", bytes: fatbin() }, { name: ".rodata", bytes: rodataWithBundle() }, { name: ".shstrtab" }]);
    await expectSameAsSpooled(file, 1);
  });

  it("the offload section after the table: streamed", async () => {
    const file = elf([{ name: ".text", bytes: filler(30_000) }, { name: ".shstrtab" }, { table: true }, { name: ".hip_fatbin", bytes: fatbin() }]);
    await expectSameAsSpooled(file, 1);
  });

  it("an ELF file without offload sections: streamed, nothing found although .rodata holds a bundle", async () => {
    const file = elf([{ name: ".rodata", bytes: rodataWithBundle() }, { name: ".shstrtab" }, { table: true }]);
    const members = await expectSameAsSpooled(file, 1);
    expect(bundlesOf(members)).toEqual([]);
  });

  it("section names more than 1 MiB before the table (a large .strtab between, as lld lays out): kept by their marker, streamed", async () => {
    const file = elf([{ name: ".hip_fatbin", bytes: fatbin() }, { name: ".shstrtab" }, { name: ".strtab", bytes: filler(1_200_000), type: SHT_STRTAB }, { table: true }]);
    const members = await expectSameAsSpooled(file, 1);
    expect(bundlesOf(members).map((b) => b.section)).toEqual([".hip_fatbin", ".hip_fatbin"]);
  });

  it("section names more than 1 MiB before the table without the `.shstrtab` marker: not kept, so decoded again and spooled, the same answer", async () => {
    const file = elf([{ name: ".hip_fatbin", bytes: fatbin() }, { name: ".names", names: true }, { name: ".debug_info", bytes: filler(1_200_000) }, { table: true }]);
    await expectSameAsSpooled(file, 0);
  });

  it("a `.shstrtab` string in .rodata is only a candidate: the table decides, the same answer", async () => {
    const rodata = filler(300_000, 12);
    rodata.set(new TextEncoder().encode("\0.shstrtab\0"), 150_000);
    const file = elf([{ name: ".rodata", bytes: rodata }, { name: ".hip_fatbin", bytes: fatbin() }, { name: ".shstrtab" }, { name: ".strtab", bytes: filler(1_200_000), type: SHT_STRTAB }, { table: true }]);
    await expectSameAsSpooled(file, 1);
  });

  it("a bundle in .rodata whose payloads would cover .hip_fatbin: the hop is not trusted, the same answer", async () => {
    // The stray bundle declares a payload running over the fat binary section that follows it.
    const stray = writeBinaryBundle([{ id: "hipv4-amdgcn-amd-amdhsa--gfx900", data: filler(200_000, 4) }]);
    const rodata = stray.subarray(0, stray.length - 199_000);
    const file = elf([{ name: ".rodata", bytes: rodata }, { name: ".hip_fatbin", bytes: fatbin() }, { name: ".tail", bytes: filler(300_000, 6) }, { name: ".shstrtab" }, { table: true }]);
    const members = await expectSameAsSpooled(file, 0);
    expect(bundlesOf(members).map((b) => b.section)).toEqual([".hip_fatbin", ".hip_fatbin"]);
  });

  it("an ELF file without a section table is spooled as before (walked whole)", async () => {
    const file = elf([{ name: ".hip_fatbin", bytes: fatbin() }, { name: ".rodata", bytes: rodataWithBundle() }, { name: ".shstrtab" }, { table: true }], { noTable: true });
    const members = await expectSameAsSpooled(file, 0);
    // Walked whole: the .rodata bundle is found too.
    expect(bundlesOf(members).length).toBe(3);
  });

  it("a member that is not ELF is spooled as before", async () => {
    await expectSameAsSpooled(fatbin(), 0);
  });
});

describe("MemberCapture", () => {
  it("reads only what it kept: a payload byte, or a search over a stretch hopped over, is a CaptureMiss", () => {
    const section = fatbin();
    // Over 1 MiB of other sections between, so that the bytes kept before the table do not reach the payloads.
    const file = elf([{ name: ".hip_fatbin", bytes: section }, { name: ".text", bytes: filler(1_100_000) }, { name: ".shstrtab" }, { table: true }]);
    const capture = captureMember(file.subarray(0, 1024), file.length)!;
    expect(capture).toBeDefined();
    for (let at = 0; at < file.length; at += 10_000) capture.push(file.subarray(at, at + 10_000));
    const source = capture.finish();
    // The first bundle's header is kept (it starts the section, 8-aligned after the 64-byte ELF header).
    const header = new Uint8Array(24);
    expect(source.read(header, 64)).toBe(24);
    expect(header).toEqual(MAGIC);
    // Its payload (the magic planted in its middle included) is not.
    const inPayload = 64 + 4096 + 35_000;
    expect(() => source.read(new Uint8Array(24), inPayload)).toThrow(/not kept/);
    expect(isCaptureMiss((() => { try { source.read(new Uint8Array(1), inPayload); } catch (e) { return e; } })())).toBe(true);
    expect(() => source.nextMagic(inPayload - 100, inPayload + 100)).toThrow(/not kept/);
    // From the section's start the next magic is the first bundle, from just past it the second.
    expect(source.nextMagic(64, 64 + section.length)).toEqual({ at: 64, kind: "bundle" });
  });

  it("does not take a member that is not an ELF file with a section table", () => {
    expect(captureMember(fatbin().subarray(0, 1024), 200_000)).toBeUndefined();
    const noTable = elf([{ name: ".hip_fatbin", bytes: fatbin() }, { name: ".shstrtab" }, { table: true }], { noTable: true });
    expect(captureMember(noTable.subarray(0, 1024), noTable.length)).toBeUndefined();
  });
});

describe("a deflated zip member (a wheel's library)", () => {
  const file = elf([
    { name: ".text", bytes: filler(200_000) },
    { name: ".rodata", bytes: rodataWithBundle() },
    { name: ".hip_fatbin", bytes: fatbin() },
    { name: ".shstrtab" },
    { table: true },
  ]);

  function wheel(): Uint8Array | undefined {
    if (!haveTools("zip")) return undefined;
    const dir = scratchDir("offload-kit-stream-zip-");
    mkdirSync(join(dir, "pkg/lib"), { recursive: true });
    writeFileSync(join(dir, "pkg/lib/libx.so"), file);
    return tool("zip", ["-q", "-6", "-r", "-", "pkg"], { cwd: dir });
  }

  /** The zip with the library's declared uncompressed size (central directory) changed by `delta`. */
  function lying(zip: Uint8Array, delta: number): Uint8Array {
    const out = zip.slice();
    const view = new DataView(out.buffer);
    for (let at = 0; at + 46 <= out.length; at++) {
      if (view.getUint32(at, true) === 0x02014b50 && view.getUint32(at + 24, true) === file.length) view.setUint32(at + 24, file.length + delta, true);
    }
    return out;
  }

  async function walkZip(zip: Uint8Array, stream: boolean) {
    const members = new Map<string, unknown>();
    const problems: PackageProblem[] = [];
    const walk = await walkPackage(bytesSource(zip), "x.whl", {
      decoders: nodeDecoders(),
      spooler: memorySpooler(),
      onMember: ({ path, source }) => {
        members.set(path.slice(1).join("!"), located(source));
      },
      onProblem: (p) => problems.push(p),
      ...(stream ? { streamMembers: { minSize: 1024, start: captureMember, missed: isCaptureMiss } } : {}),
    });
    return { members, problems, streamed: walk!.streamed };
  }

  it("is located as it inflates, as when spooled", async () => {
    const zip = wheel();
    if (zip === undefined) return;
    const spooled = await walkZip(zip, false);
    const streamed = await walkZip(zip, true);
    expect(streamed.streamed).toBe(1);
    expect(spooled.streamed).toBe(0);
    expect(streamed.members).toEqual(spooled.members);
    expect(streamed.problems).toEqual([]);
    expect(bundlesOf(streamed.members, "pkg/lib/libx.so").map((b) => b.section)).toEqual([".hip_fatbin", ".hip_fatbin"]);
  });

  it.each([["more", -100], ["fewer", 100]])("inflating to %s bytes than declared: the same problem as when spooled", async (_label, delta) => {
    const zip = wheel();
    if (zip === undefined) return;
    const bad = lying(zip, delta);
    const spooled = await walkZip(bad, false);
    const streamed = await walkZip(bad, true);
    expect(spooled.problems.length).toBe(1);
    expect(streamed.problems).toEqual(spooled.problems);
    expect(streamed.members).toEqual(spooled.members);
  });
});

/** An ar archive (a .deb when its members are debian-binary, control.tar.*, data.tar.*). */
function arOf(members: readonly [string, Uint8Array][]): Uint8Array {
  const parts: Uint8Array[] = [new TextEncoder().encode("!<arch>\n")];
  for (const [name, body] of members) {
    const header = `${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"100644".padEnd(8)}${String(body.length).padEnd(10)}\`\n`;
    parts.push(new TextEncoder().encode(header), body, ...(body.length % 2 === 1 ? [new Uint8Array([0x0a])] : []));
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const EM_AMDGPU = 224;
const MiB = 1024 * 1024;

describe("a .deb whose standalone code objects keep their section names behind a large .strtab (librocblas0's layout)", () => {
  // Over 16 MiB each, so that the CLI streams them as it does librocblas0's (its TensileLibrary_*.co: .symtab,
  // .shstrtab, then 23-36 MB of .strtab before the section table).
  const codeObject = elf([
    { name: ".note", bytes: filler(4096, 2) },
    { name: ".text", bytes: filler(16 * MiB, 3) },
    { name: ".symtab", bytes: filler(200_000, 4), type: 2 },
    { name: ".shstrtab" },
    { name: ".strtab", bytes: filler(1536 * 1024, 5), type: SHT_STRTAB },
    { table: true },
  ], { machine: EM_AMDGPU, osabi: 64, abiVersion: 3, flags: 0x30 | 0x100 | 0x400 }); // HSA, code object v5, gfx908 (xnack and sramecc any)
  // A host library whose names table has no `.shstrtab` marker and lies 1.2 MiB before the table: a miss, read again.
  const library = elf([
    { name: ".hip_fatbin", bytes: fatbin() },
    { name: ".text", bytes: filler(16 * MiB, 6) },
    { name: ".names", names: true },
    { name: ".debug_info", bytes: filler(1_200_000, 7) },
    { table: true },
  ]);
  const files: [string, Uint8Array][] = [
    ["usr/share/doc/readme", new TextEncoder().encode("text\n")],
    ["usr/lib/library/TensileLibrary_gfx908.co", codeObject],
    ["usr/lib/libx.so", library],
    ["usr/lib/library/after.dat", filler(70_000, 8)],
  ];
  const tar = tarOf(files.map(([name, body]) => tarEntry(name, body)));

  /** data.tar.xz in 1 MiB blocks, as dpkg-deb writes it in blocks; undefined without the xz program. */
  function deb(): Uint8Array | undefined {
    if (!haveTools("xz")) return undefined;
    const xz = tool("xz", ["-0", "-T1", "--block-size=1MiB", "-c"], { input: tar })!;
    const control = tool("xz", ["-0", "-c"], { input: tarOf([tarEntry("./control", new TextEncoder().encode("Package: x\n"))]) })!;
    return arOf([["debian-binary", new TextEncoder().encode("2.0\n")], ["control.tar.xz", control], ["data.tar.xz", xz]]);
  }

  it("is walked with each member decoded once, and the one miss read again from its own xz block, within a budget of the package's own bytes", async () => {
    const pkg = deb();
    if (pkg === undefined) return;
    // Every decode's output, counted as it is consumed (the hook is the walker's `decoders`).
    const decoded: number[] = [];
    const inner = nodeDecoders();
    const decoders: Decoders = {
      ...inner,
      async *decode(method, input) {
        const k = decoded.push(0) - 1;
        for await (const chunk of inner.decode(method, input)) {
          decoded[k]! += chunk.length;
          yield chunk;
        }
      },
    };
    const members = new Map<string, unknown>();
    const problems: PackageProblem[] = [];
    const walk = await walkPackage(bytesSource(pkg), "x.deb", {
      decoders,
      spooler: memorySpooler(),
      // The package's own decoded bytes and nothing more: a re-read that were counted would run it out.
      maxDecompressed: tar.length,
      onMember: ({ path, source }) => {
        members.set(path.slice(1).join("/"), located(source));
      },
      onProblem: (p) => problems.push(p),
      streamMembers: { minSize: 16 * MiB + 1, start: captureMember, missed: isCaptureMiss },
    });
    expect(problems).toEqual([]);
    expect(walk!.streamed).toBe(1);
    expect([...members.keys()]).toEqual(files.map(([name]) => name));
    for (const [name, body] of files) expect(members.get(name), name).toEqual(located(bytesSource(body)));
    expect(bundlesOf(members, "usr/lib/libx.so").map((b) => b.section)).toEqual([".hip_fatbin", ".hip_fatbin"]);
    // The first pass decodes the whole tar once; the miss is decoded again from the 1 MiB block holding
    // its start, not from the package's start (16 MiB and more before it), so at most its size and a block.
    expect(decoded.length).toBe(2);
    expect(decoded[0]).toBe(tar.length);
    expect(decoded[1]).toBeGreaterThanOrEqual(library.length);
    expect(decoded[1]).toBeLessThanOrEqual(library.length + 2 * MiB);
  }, HANG_MS);

  it("ls, sizes and check --json of the .deb answer as for the unpacked files", async () => {
    const pkg = deb();
    if (pkg === undefined) return;
    const dir = scratchDir("offload-kit-rocblas-layout-");
    writeFileSync(join(dir, "x.deb"), pkg);
    for (const [name, body] of files) {
      mkdirSync(join(dir, "unpacked", name, ".."), { recursive: true });
      writeFileSync(join(dir, "unpacked", name), body);
    }
    const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
    const strip = ({ path: _p, member: _m, ...rest }: Record<string, unknown>) => rest;
    for (const command of [["ls", "--json"], ["sizes", "--json"]]) {
      const fromDeb = await kit(...command, "x.deb");
      expect(fromDeb.stderr, command.join(" ")).toBe("");
      expect(fromDeb.code).toBe(0);
      const pkgReport = JSON.parse(fromDeb.stdout.toString()).files[0];
      // Every member read, the code object located as it streamed (no miss), the library read again after its miss.
      expect(pkgReport.package).toMatchObject({ format: "deb", members: 4, streamed: 1 });
      expect(pkgReport.problems ?? []).toEqual([]);
      // Only members with device code are listed (the standalone code object and the library), each as for the unpacked file.
      const listed = ["usr/lib/library/TensileLibrary_gfx908.co", "usr/lib/libx.so"];
      expect(pkgReport.members.map((m: { member: string[] }) => m.member.join("/"))).toEqual(listed);
      for (const [i, name] of listed.entries()) {
        const fromFile = JSON.parse((await kit(...command, join("unpacked", name))).stdout.toString()).files[0];
        expect(strip(pkgReport.members[i]), `${command[0]} ${name}`).toEqual(strip(fromFile));
      }
      expect(pkgReport.members[0].size).toBe(codeObject.length);
      expect(pkgReport.members[1].size).toBe(library.length);
    }
    // libx.so's second fat binary holds gfx1030 code only: the runtime would fail it on gfx90a (issue 24
    // item 6), packed or unpacked alike.
    const checked = await kit("check", "--gpu=gfx90a", "--json", "x.deb");
    const aloneRun = await kit("check", "--gpu=gfx90a", "--json", join("unpacked", "usr/lib/libx.so"));
    expect(checked.code).toBe(1);
    expect(aloneRun.code).toBe(1);
    const verdict = JSON.parse(checked.stdout.toString()).inputs[0];
    const alone = JSON.parse(aloneRun.stdout.toString()).inputs[0];
    // The code object (gfx908 only) is a member built for another GPU: listed, not failed.
    expect(verdict).toMatchObject({ kind: "package", ok: false, deviceEntries: 3, loadable: 1 });
    expect(alone.ok).toBe(false);
    for (const target of alone.targets) expect(verdict.targets).toContainEqual(target);
    expect(verdict.members.map((m: { verdict: string }) => m.verdict)).toContain("fat-binary-without-code");
    // No GPU is served by both fat binaries: gfx1030 fails the first the same way.
    const other = JSON.parse((await kit("check", "--gpu=gfx1030", "--json", "x.deb")).stdout.toString()).inputs[0];
    expect(other.ok).toBe(false);
  }, HANG_MS);
});
