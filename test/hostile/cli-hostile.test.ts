// Whole-process hostile cases for every CLI (the built bins, as a user runs them): zstd bombs, sizes of
// 2^63, a 100,000-entry header, IDs and member names with '/', '..', absolute paths and NUL, outputs that
// are symbolic links, outputs that are inputs (written, as natively), and a full disk. Each must end in exit 1 with
// `<tool>: error: ...` and nothing written (or, for names, nothing written outside the output folder).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeArchive } from "../../src/formats/archive.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Encode } from "../../src/formats/bytes.js";
import { writeOffloadBinary } from "../../src/formats/offload-binary.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/", import.meta.url).pathname;
const GFX906 = "hip-amdgcn-amd-amdhsa--gfx906";
const HOST = "host-x86_64-unknown-linux-gnu-";
const root = mkdtempSync(join(tmpdir(), "offload-kit-hostile-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Tool = "offload-bundler" | "offload-packager" | "offload-kit" | "offload-wrapper";

function run(tool: Tool, cwd: string, args: string[], options: { env?: Record<string, string>; stdout?: number } = {}) {
  const result = spawnSync(process.execPath, [join(BIN, `${tool}.js`), ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...options.env },
    stdio: ["ignore", options.stdout ?? "pipe", "pipe"],
    timeout: HANG_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: result.status, stdout: result.stdout ?? "", stderr: result.stderr };
}

/** Every file below `dir` with a hash of its contents (links as their targets), to prove nothing was written. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      const key = `${prefix}${entry.name}`;
      if (entry.isSymbolicLink()) out[key] = `-> ${readlinkSync(path)}`;
      else if (entry.isDirectory()) walk(path, `${key}/`);
      else out[key] = createHash("sha1").update(readFileSync(path)).digest("hex");
    }
  };
  walk(dir, "");
  return out;
}

function workdir(files: Record<string, Uint8Array | string>): string {
  const dir = mkdtempSync(join(root, "case-"));
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  return dir;
}

/** Exit 1, one `<tool>: error: ...` line naming what is wrong, and the folder exactly as it was. */
function expectRefused(tool: Tool, dir: string, args: string[], message: RegExp, options: { env?: Record<string, string> } = {}) {
  const before = snapshot(dir);
  const result = run(tool, dir, args, options);
  const prefix = tool === "offload-kit" ? `offload-kit(\\.js)? \\w+` : `${tool}(\\.js)?`;
  expect(result.code, `${tool} ${args.join(" ")}\n${result.stderr}`).toBe(1);
  expect(result.stderr, `${tool} ${args.join(" ")}`).toMatch(new RegExp(`(^|/|\\n)${prefix}: error: `));
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/internal error|    at /);
  expect(snapshot(dir), `${tool} ${args.join(" ")} wrote something`).toEqual(before);
  return result;
}

const u64 = (value: bigint): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, value, true);
  return b;
};
const cat = (...parts: (Uint8Array | string)[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));

/** A CCOB (v2, zstd) whose one tiny frame claims `claimed` bytes and holds one 16-byte RLE block. */
function zstdBomb(claimed: number): Uint8Array {
  const frame = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xa0, claimed & 0xff, (claimed >>> 8) & 0xff, (claimed >>> 16) & 0xff, claimed >>> 24, 0x83, 0, 0, 0x41);
  return ccobV2(frame, claimed);
}

/** A CCOB v2 (zstd) header declaring `declared` uncompressed bytes, then `stream`. */
function ccobV2(stream: Uint8Array, declared: number): Uint8Array {
  const header = new Uint8Array(24);
  const view = new DataView(header.buffer);
  header.set(latin1Encode("CCOB"));
  view.setUint16(4, 2, true);
  view.setUint16(6, 1, true);
  view.setUint32(8, 24 + stream.length, true);
  view.setUint32(12, declared, true);
  return cat(header, stream);
}

/** A real zstd bomb: `blocks` RLE blocks of 128 KiB each (4 bytes apiece), content size recorded. */
function realBomb(blocks: number): Uint8Array {
  const size = blocks * 128 * 1024;
  const frameHeader = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xa0, size & 0xff, (size >>> 8) & 0xff, (size >>> 16) & 0xff, size >>> 24);
  const block = (last: boolean) => {
    const h = ((128 * 1024) << 3) | (1 << 1) | (last ? 1 : 0);
    return Uint8Array.of(h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff, 0);
  };
  return ccobV2(cat(frameHeader, ...Array.from({ length: blocks }, (_, i) => block(i === blocks - 1))), size);
}

function bundleWithEntry(id: string, size: bigint, count = 1n): Uint8Array {
  const offset = 32n + 24n + BigInt(id.length);
  return cat("__CLANG_OFFLOAD_BUNDLE__", u64(count), u64(offset), u64(size), u64(BigInt(id.length)), id, "payload!");
}

describe("zstd bombs in compressed bundles", () => {
  const files = { "bomb.bc": zstdBomb(0xfffffff0), "real.bc": realBomb(512) };

  it("a tiny frame claiming 4 GiB: refused before anything is allocated, by every reader", () => {
    const dir = workdir(files);
    const corrupt = /Data corruption detected/;
    expectRefused("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=bomb.bc", "-output=out.bc", `-targets=${GFX906}`], corrupt);
    expectRefused("offload-bundler", dir, ["-type=bc", "-list", "-input=bomb.bc"], corrupt);
    expectRefused("offload-kit", dir, ["extract", "--out-dir=out", "bomb.bc"], corrupt);
    expectRefused("offload-kit", dir, ["unbundle", `-targets=${GFX906}`, "--out-dir=out", "bomb.bc"], corrupt);
  });

  it("a real bomb (64 MiB from 2 KiB) above OFFLOAD_KIT_MAX_DECOMPRESSED is refused by its declared size", () => {
    const dir = workdir(files);
    const env = { OFFLOAD_KIT_MAX_DECOMPRESSED: String(1 << 20) };
    expectRefused("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=real.bc", "-output=out.bc", `-targets=${GFX906}`], /more than the limit of 1048576/, { env });
  });
});

describe("declared sizes of 2^63 and a 100,000-entry header", () => {
  const ccob3 = new Uint8Array(40);
  ccob3.set(latin1Encode("CCOB"));
  new DataView(ccob3.buffer).setUint16(4, 3, true);
  new DataView(ccob3.buffer).setUint16(6, 1, true);
  new DataView(ccob3.buffer).setBigUint64(8, 2n ** 63n, true);
  new DataView(ccob3.buffer).setBigUint64(16, 2n ** 63n, true);
  const binary = writeOffloadBinary({ imageKind: 1, offloadKind: 3, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx906"]], image: Uint8Array.of(1, 2, 3) });
  const hugeBinary = binary.slice();
  new DataView(hugeBinary.buffer).setBigUint64(8, 2n ** 63n, true);
  const member = `${"big.o/".padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"644".padEnd(8)}${"9999999999"}\`\n`;
  const files = {
    "after.bc": cat(bundleWithEntry(HOST, 1n, 2n).subarray(0, 32 + 24 + HOST.length), u64(200n), u64(2n ** 63n), u64(4n), "hip!", "x".repeat(200)),
    "ccob3.bc": ccob3,
    "huge.bin": hugeBinary,
    "huge.a": cat("!<arch>\n", member, "data"),
    "many.bc": bundleWithEntry(GFX906, 8n, 100_000n),
  };
  files["after.bc"] = (() => {
    // A good first entry, then one whose payload is 2^63 bytes long: an error (LLVM itself crashes here).
    const first = cat(u64(0n), u64(1n), u64(BigInt(HOST.length)), HOST);
    const second = cat(u64(0n), u64(2n ** 63n), u64(BigInt(GFX906.length)), GFX906);
    const head = 32 + first.length + second.length;
    new DataView(first.buffer, first.byteOffset).setBigUint64(0, BigInt(head), true);
    new DataView(second.buffer, second.byteOffset).setBigUint64(0, BigInt(head + 1), true);
    return cat("__CLANG_OFFLOAD_BUNDLE__", u64(2n), first, second, "h");
  })();

  it("bundle entries, CCOB v3 sizes, offload binary sizes, archive member sizes", () => {
    const dir = workdir(files);
    expectRefused("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=after.bc", "-output=out.bc", `-targets=${GFX906}`], /size 9223372036854775808/);
    expectRefused("offload-bundler", dir, ["-type=bc", "-list", "-input=ccob3.bc"], /9223372036854775808 at offset 8 is too large/);
    expectRefused("offload-packager", dir, ["huge.bin", "--image=file=x.o,arch=gfx906"], /The end of the file was unexpectedly encountered/);
    expectRefused("offload-kit", dir, ["extract", "--out-dir=out", "huge.bin"], /declares size 9223372036854775808/);
    expectRefused("offload-bundler", dir, ["-type=a", "-unbundle", "-input=huge.a", "-output=out.a", `-targets=${GFX906}`], /truncated or malformed archive/);
    // check reports a file it cannot read on stderr (issue 19 item 11) and fails when nothing can load.
    const check = run("offload-kit", dir, ["check", "--gpu=gfx906", "after.bc"]);
    expect([check.code, check.stderr]).toEqual([1, expect.stringMatching(/check: error: after\.bc: at 0x0: .*9223372036854775808/)]);
  });

  it("a header declaring 100,000 entries that are not there", () => {
    const dir = workdir(files);
    expectRefused("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=many.bc", "-output=out.bc", `-targets=${GFX906}`], /bundle entry 1 /);
    expectRefused("offload-kit", dir, ["unbundle", `-targets=${GFX906}`, "--out-dir=out", "many.bc"], /bundle entry 1 /);
  });

  // Only a hang fails it (HANG_MS): a wall-clock bound would judge the machine's load, not the program.
  it("a real 100,000-entry header lists every entry", () => {
    const entries = Array.from({ length: 100_000 }, (_, i) => ({ id: `${GFX906}-${i}`, data: new Uint8Array(0) }));
    const dir = workdir({ "real.bc": writeBinaryBundle(entries) });
    const result = run("offload-bundler", dir, ["-type=bc", "-list", "-input=real.bc"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split("\n").filter(Boolean)).toHaveLength(100_000);
  });
});

describe("IDs and member names with '/', '..', absolute paths and NUL", () => {
  const ids = [`${GFX906}/../../../escape`, "/tmp/offload-kit-hostile-absolute", "hip-amdgcn-amd-amdhsa--gfx90a\0nul", HOST];
  const bundle = writeBinaryBundle(ids.map((id, i) => ({ id, data: Uint8Array.of(0x41 + i) })));
  // The writer refuses NUL in strings: put one in afterwards.
  const binary = writeOffloadBinary({ imageKind: 1, offloadKind: 3, strings: [["triple", "../../../escape"], ["arch", "/tmp/offload-kit-hostile-archQx"]], image: Uint8Array.of(7) });
  binary[Buffer.from(binary).indexOf("archQx") + 4] = 0;
  const archive = writeArchive([
    { name: "../../escape.bc", data: bundle, symbols: null },
    { name: "/tmp/offload-kit-hostile-member.bc", data: bundle, symbols: null },
  ]);

  it("never write outside the output folder", () => {
    const dir = workdir({ "names.bc": bundle, "names.bin": binary, "names.a": archive });
    mkdirSync(join(dir, "out"));
    const outside = () => snapshot(dir);
    const before = { ...outside() };
    const runs = [
      run("offload-kit", dir, ["extract", "--out-dir=out", "names.bc", "names.bin", "names.a"]),
      run("offload-kit", dir, ["unbundle", `-targets=${GFX906}/../../x`, "--out-dir=out", "--allow-missing-bundles", "names.bc"]),
      run("offload-bundler", dir, ["-type=a", "-unbundle", "-input=names.a", "-output=out/lib.a", `-targets=${GFX906}`, "-allow-missing-bundles"]),
      run("offload-packager", join(dir, "out"), ["../names.bin", "--image=kind=hip"]),
    ];
    for (const r of runs) expect(r.stderr).not.toMatch(/internal error|    at /);
    const after = outside();
    for (const key of Object.keys(after)) {
      if (!(key in before)) expect(key.startsWith("out/"), `wrote ${key}`).toBe(true);
    }
    for (const [key, value] of Object.entries(before)) expect(after[key], key).toBe(value);
    expect(existsSync("/tmp/offload-kit-hostile-absolute")).toBe(false);
    expect(readdirSync("/tmp").some((n) => n.startsWith("offload-kit-hostile-arch") || n.startsWith("offload-kit-hostile-member"))).toBe(false);
  });
});

describe("outputs that are symbolic links or inputs", () => {
  const bundle = writeBinaryBundle([{ id: HOST, data: latin1Encode("host") }, { id: GFX906, data: latin1Encode("dev") }]);
  const binary = writeOffloadBinary({ imageKind: 1, offloadKind: 3, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx906"]], image: Uint8Array.of(1, 2, 3) });

  it("a symbolic link is never written through (its target stays as it was)", () => {
    const outside = mkdtempSync(join(root, "outside-"));
    const target = join(outside, "precious");
    writeFileSync(target, "precious");
    const dir = workdir({ "in.bc": bundle, "dev.o": "device", "in.bin": binary });
    symlinkSync(target, join(dir, "link"));
    const refused = /'link': refusing to write through a symbolic link/;
    expectRefused("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=in.bc", "-output=link", `-targets=${GFX906}`], refused);
    expectRefused("offload-bundler", dir, ["-type=bc", "-input=in.bc", "-input=dev.o", "-output=link", `-targets=${HOST},${GFX906}`], refused);
    expectRefused("offload-packager", dir, ["-o", "link", "--image=file=dev.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip"], refused);
    expectRefused("offload-wrapper", dir, ["-o", "link", "--target=x86_64-unknown-linux-gnu", "dev.o"], /refusing to write through a symbolic link/);
    expect(readFileSync(target, "utf8")).toBe("precious");
    expect(lstatSync(join(dir, "link")).isSymbolicLink()).toBe(true);
  });

  it("an output that is one of the inputs is written once the inputs are read, as the native tools do", () => {
    const dir = workdir({ "in.bc": bundle, "dev.o": "device", "in.bin": binary });
    const unbundled = run("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=in.bc", "-output=in.bc", `-targets=${GFX906}`]);
    expect(unbundled.code, unbundled.stderr).toBe(0);
    expect(readFileSync(join(dir, "in.bc"), "latin1")).toBe("dev");
    const bundled = run("offload-bundler", dir, ["-type=bc", "-input=in.bc", "-input=dev.o", "-output=dev.o", `-targets=${HOST},${GFX906}`]);
    expect(bundled.code, bundled.stderr).toBe(0);
    expect(readFileSync(join(dir, "dev.o")).subarray(0, 24).toString("latin1")).toBe("__CLANG_OFFLOAD_BUNDLE__");
    for (const [tool, args] of [
      ["offload-packager", ["-o", "in.bin", "--image=file=in.bin,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip"]],
      ["offload-wrapper", ["-o", "in.bin", "--target=x86_64-unknown-linux-gnu", "in.bin"]],
    ] as const) {
      const result = run(tool, dir, [...args]);
      expect(result.code, result.stderr).toBe(0);
    }
    expect(readdirSync(dir).filter((n) => n.includes("offload-kit"))).toEqual([]);
  });

  it("a device is written in place, never renamed over", () => {
    const dir = workdir({ "in.bc": bundle });
    const result = run("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=in.bc", "-output=/dev/null", `-targets=${GFX906}`]);
    expect(result.code, result.stderr).toBe(0);
    expect(lstatSync("/dev/null").isCharacterDevice()).toBe(true);
    expect(readdirSync("/dev").filter((n) => n.includes("offload-kit"))).toEqual([]);
  });
});

/** A small tmpfs of its own (mount namespace: gone with the process), or undefined where that is not allowed. */
function canMountTmpfs(): boolean {
  return spawnSync("unshare", ["-m", "sh", "-c", `mount -t tmpfs -o size=64k tmpfs ${root}`], { stdio: "ignore" }).status === 0;
}

describe("a full disk", () => {
  const big = writeBinaryBundle([{ id: HOST, data: new Uint8Array(48 * 1024).fill(1) }, { id: GFX906, data: new Uint8Array(256 * 1024).fill(2) }]);

  it("/dev/full as standard output (-output=-)", () => {
    const dir = workdir({ "in.bc": big });
    const full = openSync("/dev/full", "w");
    try {
      const result = run("offload-bundler", dir, ["-type=bc", "-unbundle", "-input=in.bc", "-output=-", `-targets=${GFX906}`], { stdout: full });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/offload-bundler(\.js)?: error: '-': No space left on device/);
      const listed = run("offload-bundler", dir, ["-type=bc", "-list", "-input=in.bc"], { stdout: full });
      expect(listed.code, listed.stderr).toBe(1);
      expect(listed.stderr).toMatch(/error: .*No space left on device/);
      expect(listed.stderr).not.toMatch(/internal error|    at /);
    } finally {
      closeSync(full);
    }
  });

  it.runIf(process.platform === "linux" && canMountTmpfs())("ENOSPC on a 64 KiB tmpfs: a clear error, nothing left behind", () => {
    const dir = workdir({ "in.bc": big, "dev.o": new Uint8Array(200 * 1024).fill(3) });
    writeFileSync(join(dir, "in.bin"), writeOffloadBinary({ imageKind: 1, offloadKind: 3, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx906"]], image: new Uint8Array(200 * 1024).fill(4) }));
    const node = process.execPath;
    const commands = [
      `${node} ${BIN}offload-bundler.js -type=bc -unbundle -input=in.bc -output=full/out.bc -targets=${GFX906}`,
      `${node} ${BIN}offload-bundler.js -type=bc -input=in.bc -input=dev.o -output=full/out.bc -targets=${HOST},${GFX906}`,
      `${node} ${BIN}offload-packager.js -o full/out.bin --image=file=dev.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip`,
      `${node} ${BIN}offload-kit.js extract --out-dir=full in.bc in.bin`,
      `${node} ${BIN}offload-wrapper.js -o full/out.bc --target=x86_64-unknown-linux-gnu dev.o`,
    ];
    // Each command in a private mount namespace with a 64 KiB tmpfs on full/; what is left there is listed after it.
    const script = commands.map((c) => `${c} >/dev/null; echo "exit=$?"; ls -A full; echo "--"`).join("\n");
    mkdirSync(join(dir, "full"));
    const result = spawnSync("unshare", ["-m", "sh", "-c", `mount -t tmpfs -o size=64k tmpfs full && ${script}`], { cwd: dir, encoding: "utf8" });
    const blocks = result.stdout.split("--\n").filter((b) => b.trim() !== "");
    expect(blocks, result.stderr).toHaveLength(commands.length);
    for (const [i, block] of blocks.entries()) expect(block.trim(), commands[i]).toBe("exit=1");
    const errors = result.stderr.split("\n").filter(Boolean);
    expect(errors.length, result.stderr).toBeGreaterThanOrEqual(commands.length);
    for (const line of errors) expect(line).toMatch(/^\S*offload-(bundler|packager|kit|wrapper)(\.js)?( extract)?: error: .*No space left on device/);
    expect(readdirSync(join(dir, "full"))).toEqual([]);
  });
});
