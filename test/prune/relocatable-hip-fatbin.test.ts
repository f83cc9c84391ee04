// `offload-kit prune|compress|decompress|replace` on relocatable HIP objects (`clang -x hip -c` without
// -fgpu-rdc, `ld -r` links of them, archives of them), run as whole processes of dist/bin/offload-kit.js.
// The judge is the linker and the stand-in HIP runtime (test/fixtures/hip-standin/): each edited object is
// linked again (clang-19 --hip-link with lld-19 and GNU ld) into a shared library whose constructors must
// register the same fat binaries as the original's, each with exactly the kept entries, byte-identical.
// The objects must also still be read by llvm-readelf/llvm-objdump without a warning, and eu-elflint must
// say nothing of them it does not say of the originals.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readElfObject } from "../../src/objcopy/index.js";
import { ARCHS, FIXTURES, Workshop, keepEntries, run, standinTools } from "../elf-edit/standin.js";
import { HANG_MS } from "../limits.js";
import { nativeTool } from "../native.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const available = standinTools() && nativeTool("llvm-ar-19") !== undefined && nativeTool("llvm-objdump-19") !== undefined;
const keep90a = (id: string): boolean => id.startsWith("host-") || /--gfx90a(:|$)/.test(id);

function kit(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 28 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(...args: string[]): string {
  const r = kit(...args);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
}

function tool(name: string, args: readonly string[]): string {
  const r = run(name, args);
  if (r.status !== 0) throw new Error(`${name} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** llvm-readelf and llvm-objdump read every header, symbol and relocation without a warning. */
function readsCleanly(file: string): void {
  for (const [name, args] of [["llvm-readelf-19", ["-a", "-W", file]], ["llvm-objdump-19", ["-d", "-r", file]]] as const) {
    const r = run(name, args);
    expect(r.status, `${name} ${file}`).toBe(0);
    expect(r.stderr, `${name} ${file}`).toBe("");
  }
}

/** eu-elflint's complaints, without the file name (clang's .llvm_addrsig is one it always has). */
function elflint(file: string): string {
  return run("eu-elflint", ["--gnu-ld", file]).stdout.split("\n").filter((l) => l !== "" && !l.startsWith("No errors")).sort().join("\n");
}

/** Offsets of `.hip_fatbin`'s wrapper relocations (symbol value + addend) in an object, and the section size. */
function fatbinTargets(file: string): { size: number; targets: number[] } {
  const obj = readElfObject(new Uint8Array(readFileSync(file)));
  const fatbin = obj.sections.find((s) => s.name === ".hip_fatbin")!;
  const rela = obj.sections.find((s) => s.name === ".rela.hipFatBinSegment")!;
  const view = new DataView(rela.data.buffer, rela.data.byteOffset, rela.data.byteLength);
  const targets: number[] = [];
  for (let at = 0; at < rela.data.length; at += 24) targets.push(Number(view.getBigInt64(at + 16, true)));
  return { size: fatbin.size, targets };
}

describe.skipIf(!available)("offload-kit on relocatable objects with .hip_fatbin (stand-in runtime)", () => {
  let shop: Workshop;
  let a: string;
  let b: string;
  let bz: string;
  let original: string;
  let originalCompressed: string;
  const path = (name: string) => join(shop.dir, name);
  const library = (objects: readonly string[], name: string, linker: "lld" | "bfd" = "lld") =>
    shop.link(objects, name, ["-shared", `-fuse-ld=${linker}`]);

  beforeAll(() => {
    shop = new Workshop();
    a = shop.compile("kernels_a.hip", "a.o", ["-fPIC"]);
    b = shop.compile("kernels_b.hip", "b.o", ["-fPIC"]);
    bz = shop.compile("kernels_b.hip", "bz.o", ["-fPIC", "--offload-compress"]);
    original = shop.registrations(library([a, b], "ab.so"), false);
    originalCompressed = shop.registrations(library([a, bz], "abz.so"), false);
  }, HANG_MS);
  afterAll(() => shop?.remove());

  it("has two fat binaries with gfx906, gfx90a and gfx1100 to prune", () => {
    expect(original.match(/^fatbin /gm)?.length).toBe(2);
    expect(original).toMatch(/^ {2}entry hipv4-amdgcn-amd-amdhsa--gfx906 /m);
  });

  it("prunes single objects (plain and CCOB); they link with lld and GNU ld into a library registering only gfx90a", () => {
    mkdirSync(path("p1"));
    const report = JSON.parse(ok("prune", "--keep=gfx90a", "--json", `--out-dir=${path("p1")}`, a, bz));
    expect(report.files.map((f: { container: string }) => f.container)).toEqual(["object with .hip_fatbin", "object with .hip_fatbin"]);
    for (const [input, output] of [[a, path("p1/a.o")], [bz, path("p1/bz.o")]]) {
      expect(statSync(output).size).toBeLessThan(statSync(input).size);
      expect(fatbinTargets(output).size).toBeLessThan(fatbinTargets(input).size);
      readsCleanly(output);
      expect(elflint(output)).toBe(elflint(input));
    }
    const expected = keepEntries(originalCompressed, keep90a, true);
    expect(expected).not.toBe(originalCompressed);
    for (const linker of ["lld", "bfd"] as const) {
      expect(shop.registrations(library([path("p1/a.o"), path("p1/bz.o")], `p1-${linker}.so`, linker), false)).toBe(expected);
    }
  });

  it.each([["ld.lld-19"], ["ld.bfd"]])("prunes an -r link by %s: every fat binary pruned, the wrapper relocations moved with them", (linker) => {
    const merged = path(`r-${linker}.o`);
    tool(linker, ["-r", a, b, "-o", merged]);
    const before = fatbinTargets(merged);
    expect(before.targets.length).toBe(2);
    expect(shop.registrations(library([merged], `r-${linker}.so`), false)).toBe(original);
    const pruned = path(`r-${linker}.p.o`);
    const dry = JSON.parse(ok("prune", "--keep=gfx90a", "--dry-run", "--json", merged));
    expect(dry.files[0].container).toBe("object with .hip_fatbin");
    ok("prune", "--keep=gfx90a", merged, "-o", pruned);
    expect(statSync(pruned).size).toBe(dry.files[0].outputSize);
    const after = fatbinTargets(pruned);
    expect(after.targets[0]).toBe(0);
    // The second bundle moved down, still at a multiple of the section's 4096-byte alignment.
    expect(after.targets[1]!).toBeLessThan(before.targets[1]!);
    expect(after.targets[1]! % 4096).toBe(0);
    expect(after.size).toBeLessThan(before.size);
    readsCleanly(pruned);
    expect(elflint(pruned)).toBe(elflint(merged));
    expect(shop.registrations(library([pruned], `r-${linker}.p.so`, "bfd"), false)).toBe(keepEntries(original, keep90a, true));
  });

  it("prunes an archive of them: members as pruned alone, the archive as llvm-ar rcs writes it, linking as before", () => {
    const archive = path("lib.a");
    tool("llvm-ar-19", ["rcs", archive, a, bz]);
    const pruned = path("lib.p.a");
    ok("prune", "--keep=gfx90a", archive, "-o", pruned);
    // The same members pruned one by one, archived by llvm-ar itself: byte-equal.
    mkdirSync(path("p2"));
    ok("prune", "--keep=gfx90a", `--out-dir=${path("p2")}`, a, bz);
    const reference = path("p2/ref.a");
    tool("llvm-ar-19", ["rcs", reference, path("p2/a.o"), path("p2/bz.o")]);
    expect(Buffer.compare(readFileSync(pruned), readFileSync(reference))).toBe(0);
    expect(tool("llvm-nm-19", ["--print-armap", pruned])).toMatch(/kernel_a in a\.o/);
    const linked = library(["-Wl,--whole-archive", pruned, "-Wl,--no-whole-archive"], "lib.p.so");
    expect(shop.registrations(linked, false)).toBe(keepEntries(originalCompressed, keep90a, true));
    // compress: each member's plain fat binary becomes a CCOB (bz.o's already is one).
    const compressed = path("lib.c.a");
    ok("compress", archive, "-o", compressed);
    const log = shop.registrations(library(["-Wl,--whole-archive", compressed, "-Wl,--no-whole-archive"], "lib.c.so"), false);
    expect(log).toBe(originalCompressed.replace(/^(fatbin \d+) bundle$/gm, "$1 ccob v2 method 1"));
  });

  it("compresses and decompresses an -r link: CCOBs registered, then the original bundles again", () => {
    const merged = path("rz.o");
    tool("ld.lld-19", ["-r", a, b, "-o", merged]);
    const compressed = path("rz.c.o");
    ok("compress", merged, "-o", compressed);
    expect(fatbinTargets(compressed).size).toBeLessThan(fatbinTargets(merged).size);
    readsCleanly(compressed);
    const log = shop.registrations(library([compressed], "rz.c.so"), false);
    expect(log).toBe(original.replace(/^(fatbin \d+) bundle$/gm, "$1 ccob v2 method 1"));
    const plain = path("rz.d.o");
    ok("decompress", compressed, "-o", plain);
    expect(fatbinTargets(plain)).toEqual(fatbinTargets(merged));
    expect(shop.registrations(library([plain], "rz.d.so"), false)).toBe(original);
  });

  it("replaces one entry in the second fat binary of an -r link", () => {
    const merged = path("rr.o");
    tool("ld.lld-19", ["-r", a, b, "-o", merged]);
    const payload = new Uint8Array(5000).map((_, i) => (i * 7) & 0xff);
    writeFileSync(path("new.co"), payload);
    const replaced = path("rr.x.o");
    ok("replace", "--entry=hipv4-amdgcn-amd-amdhsa--gfx90a", "--bundle=1", `--with=${path("new.co")}`, merged, "-o", replaced);
    readsCleanly(replaced);
    const log = shop.registrations(library([replaced], "rr.x.so"), false).split("\n");
    const fatbin1 = log.indexOf("fatbin 1 bundle");
    const entry = log.slice(fatbin1).find((l) => l.startsWith("  entry hipv4-amdgcn-amd-amdhsa--gfx90a "));
    expect(entry).toBe(`  entry hipv4-amdgcn-amd-amdhsa--gfx90a 5000 ${fnv1a(payload)}`);
    // The first fat binary is untouched.
    expect(log.slice(0, fatbin1).join("\n")).toBe(original.split("\n").slice(0, original.split("\n").indexOf("fatbin 1 bundle")).join("\n"));
  });

  it.skipIf(nativeTool("clang-22") === undefined).each([["default"], ["--offload-new-driver"]])("prunes clang-22's %s non-RDC objects", (mode) => {
    const flags = mode === "default" ? [] : [mode];
    const compile = (source: string, out: string) => {
      tool("clang-22", ["-x", "hip", ...ARCHS.map((arch) => `--offload-arch=${arch}`), "-nogpulib", "-nogpuinc", "-I", FIXTURES, "-O1", "-fPIC", ...flags,
        "-c", join(FIXTURES, source), "-o", path(out)]);
      return path(out);
    };
    const tag = mode === "default" ? "c22" : "c22n";
    const objects = [compile("kernels_a.hip", `${tag}-a.o`), compile("kernels_b.hip", `${tag}-b.o`)];
    const merged = path(`${tag}-r.o`);
    tool("ld.lld-19", ["-r", ...objects, "-o", merged]);
    const before = shop.registrations(library([merged], `${tag}.so`), false);
    expect(before).toMatch(/^ {2}entry hip(v4)?-amdgcn-amd-amdhsa--gfx906 /m);
    const pruned = path(`${tag}-r.p.o`);
    ok("prune", "--keep=gfx90a", merged, "-o", pruned);
    readsCleanly(pruned);
    const after = shop.registrations(library([pruned], `${tag}.p.so`), false);
    expect(after).toBe(keepEntries(before, keep90a, true));
    expect(after).not.toBe(before);
  });

  it("prunes an -r link of a non-RDC and an -fgpu-rdc object: .hip_fatbin and the bundle sections alike", () => {
    const rdc = shop.compile("kernels_b.hip", "b-rdc.o", ["-fPIC", "-fgpu-rdc"]);
    const mixed = path("mixed.o");
    tool("ld.lld-19", ["-r", a, rdc, "-o", mixed]);
    const listed = (file: string) => [...ok("ls", "-v", file).matchAll(/(hipv4|hip)-amdgcn-amd-amdhsa--(gfx\w+)/g)].map((m) => m[2]);
    expect(listed(mixed).sort()).toEqual(["gfx1100", "gfx1100", "gfx906", "gfx906", "gfx90a", "gfx90a"]);
    const pruned = path("mixed.p.o");
    ok("prune", "--keep=gfx90a", mixed, "-o", pruned);
    expect(listed(pruned)).toEqual(["gfx90a", "gfx90a"]);
    readsCleanly(pruned);
  });

  it("refuses a wrapper relocation that points inside a bundle, and writes nothing", () => {
    const bytes = new Uint8Array(readFileSync(a));
    const obj = readElfObject(bytes);
    const rela = obj.sections.find((s) => s.name === ".rela.hipFatBinSegment")!;
    const at = rela.data.byteOffset + 16;
    new DataView(bytes.buffer, bytes.byteOffset).setBigInt64(at, 16n, true);
    const odd = path("odd.o");
    writeFileSync(odd, bytes);
    const r = kit("prune", "--keep=gfx90a", odd, "-o", path("odd.p.o"));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/odd\.o.*(no offload bundle or CCOB starts there|not at one's start)/);
    expect(existsSync(path("odd.p.o"))).toBe(false);
    // `offload-kit verify` (the check every output passes before it lands) sees the same relocation.
    const verified = kit("verify", odd);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(/RELOCATION_NOT_AT_BUNDLE .*\.rela\.hipFatBinSegment .* entry 0 points to \.hip_fatbin offset 0x10/);
    expect(kit("verify", a).code).toBe(0);
  });
});

/** FNV-1a 64 as the stand-in runtime logs it (16 hex digits). */
function fnv1a(bytes: Uint8Array): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, "0");
}
