/**
 * `replace` against the native tools: replacing entry X by file F must give exactly what the native tool
 * writes for the same entries in the same order with F in X's place. clang-offload-bundler 19 (started from
 * its real path, so -type=o runs LLVM 19's llvm-objcopy) for binary bundles (-bundle-align 1, 8, 4096), text
 * bundles of the three comment styles, compressed bundles and fat objects (x86-64 and AArch64 hosts, a device
 * entry or the host object itself); `llvm-ar-19 rcD` of such members for archives; clang-offload-packager-19
 * for offload binaries, and `llvm-objcopy-19 --update-section` with its output for an object's
 * `.llvm.offloading` section (clang-19 -fembed-offload-object).
 *
 * Compressed bundles compare as prune's test does: byte-exact where this Node's libzstd writes what LLVM's
 * does, else the same header and the same plain bundle inside.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBinaryBundle } from "../../src/formats/bundle.js";
import { parseCcobHeader } from "../../src/formats/ccob.js";
import { readTextBundle } from "../../src/formats/text-bundle.js";
import { objectBundleEntries } from "../../src/bundler/object-bundle.js";
import { bytesSource } from "../../src/engine/source.js";
import { loadNodeCodecs } from "../../src/compress/node/codecs.js";
import type { Codecs } from "../../src/compress/codecs.js";
import { replaceWith, transformWith } from "../../src/prune/index.js";
import { hasNative, nativeTool } from "../native.js";
import { HOST, NATIVE_BUNDLER as NATIVE, bundler, generatedBundles, run } from "./generated-bundles.js";

const PACKAGER = "clang-offload-packager-19";
const available = hasNative(NATIVE) && hasNative("llvm-ar-19") && hasNative("clang-19") && hasNative("llvm-objcopy-19") && hasNative(PACKAGER);
const root = mkdtempSync(join(tmpdir(), "offload-kit-replace-diff-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let codecs: Codecs;
const { next, pick, dir, payload, targetList } = generatedBundles(1717, root);

function bundleNative(d: string, type: string, ids: readonly string[], inputs: readonly string[], output: string, extra: readonly string[] = []): Buffer {
  run(bundler(), [`-type=${type}`, `-targets=${ids.join(",")}`, ...inputs.map((i) => `-input=${i}`), `-output=${output}`, ...extra], d);
  return readFileSync(join(d, output));
}

/** Writes payload files p0.. for `targets`; returns their names, with `replacedAt` given the name of F instead. */
function inputsWith(d: string, targets: readonly string[], text: boolean, replacedAt: number, prefix = ""): { original: string[]; replaced: string[]; with: Uint8Array } {
  const original = targets.map((_, k) => {
    writeFileSync(join(d, `${prefix}p${k}`), payload(text));
    return `${prefix}p${k}`;
  });
  const replacement = payload(text, 9000);
  writeFileSync(join(d, `${prefix}new`), replacement);
  return { original, replaced: original.map((name, k) => (k === replacedAt ? `${prefix}new` : name)), with: replacement };
}

describe.skipIf(!available)("replace vs clang-offload-bundler 19 and clang-offload-packager 19", () => {
  beforeAll(async () => {
    codecs = await loadNodeCodecs();
  });

  it.each(Array.from({ length: 9 }, (_, i) => [i, [1, 8, 4096][i % 3]] as const))("binary bundle %i (-bundle-align=%i)", (_, align) => {
    const d = dir();
    const targets = targetList();
    const at = Math.floor(next() * targets.length);
    const files = inputsWith(d, targets, false, at);
    const original = bundleNative(d, "bc", targets, files.original, "orig.bc", [`-bundle-align=${align}`]);
    // The ID as stored (LLVM 19 stores the host's with a trailing '-').
    const id = parseBinaryBundle(original)[at].id;
    const result = replaceWith(original, { entry: id, payload: files.with, codecs });
    const want = bundleNative(d, "bc", targets, files.replaced, "want.bc", [`-bundle-align=${align}`]);
    expect(Buffer.from(result.output).equals(want)).toBe(true);
    expect(result.replaced).toEqual([""]);
    expect(result.notes).toEqual([]);
  });

  it.each(["ll", "s", "i", "ll", "s", "i"].map((t, i) => [i, t] as const))("text bundle %i (-type=%s)", (_, type) => {
    const d = dir();
    const targets = targetList();
    const at = Math.floor(next() * targets.length);
    const files = inputsWith(d, targets, true, at);
    const original = bundleNative(d, type, targets, files.original, `orig.${type}`);
    const comment = type === "ll" ? ";" : type === "s" ? "#" : "//";
    const id = readTextBundle(original, comment).entries[at].id;
    const result = replaceWith(original, { entry: id, payload: files.with, codecs });
    expect(result.container).toBe("bundle");
    const want = bundleNative(d, type, targets, files.replaced, `want.${type}`);
    expect(Buffer.from(result.output).equals(want)).toBe(true);
  });

  it.each(Array.from({ length: 4 }, (_, i) => [i] as const))("compressed bundle %i (-compress)", (i) => {
    const d = dir();
    const targets = targetList();
    const at = Math.floor(next() * targets.length);
    const type = i % 2 === 0 ? "ll" : "bc";
    const files = inputsWith(d, targets, type === "ll", at);
    const align = type === "bc" ? ["-bundle-align=4096"] : [];
    const original = bundleNative(d, type, targets, files.original, "orig.ccob", ["-compress", ...align]);
    const plainOriginal = transformWith(original, { codecs }, "decompress").output;
    const id = type === "bc" ? parseBinaryBundle(plainOriginal)[at].id : readTextBundle(plainOriginal, ";").entries[at].id;
    const result = replaceWith(original, { entry: id, payload: files.with, codecs });
    const want = bundleNative(d, type, targets, files.replaced, "want.ccob", ["-compress", ...align]);
    const plain = bundleNative(d, type, targets, files.replaced, "want.plain", align);
    if (!result.notes.some((n) => n.includes("level it was written at is unknown"))) {
      expect(Buffer.from(result.output).equals(want)).toBe(true);
    } else {
      expect(parseCcobHeader(result.output)).toMatchObject({ version: parseCcobHeader(want).version, method: parseCcobHeader(want).method });
      expect(Buffer.from(transformWith(result.output, { codecs }, "decompress").output).equals(plain)).toBe(true);
    }
  });

  it.each([["x86_64-unknown-linux-gnu", "device"], ["aarch64-unknown-linux-gnu", "device"], ["x86_64-unknown-linux-gnu", "host"], ["aarch64-unknown-linux-gnu", "host"]] as const)(
    "fat object on %s, a %s entry replaced", (triple, what) => {
      const d = dir();
      writeFileSync(join(d, "h.c"), "int counter = 1; static int table[64];\nint bump(int x) { return counter += x + table[x & 63]; }\n");
      writeFileSync(join(d, "h2.c"), "int other_counter = 7;\nint twice(int x) { return 2 * x + other_counter; }\n");
      run(nativeTool("clang-19")!, [`--target=${triple}`, "-O1", "-c", "h.c", "-o", "host.o"], d);
      run(nativeTool("clang-19")!, [`--target=${triple}`, "-O1", "-c", "h2.c", "-o", "host2.o"], d);
      const host = `host-${triple}`;
      const targets = targetList().map((t) => (t === HOST ? host : t));
      const hostAt = targets.indexOf(host);
      const at = what === "host" ? hostAt : pick(targets.map((_, k) => k).filter((k) => k !== hostAt));
      const files = inputsWith(d, targets, false, at);
      const inputs = files.original.map((name, k) => (k === hostAt ? "host.o" : name));
      const original = bundleNative(d, "o", targets, inputs, "fat.o");
      const id = objectBundleEntries(bytesSource(original))![at].id;
      const replacement = what === "host" ? readFileSync(join(d, "host2.o")) : files.with;
      const result = replaceWith(original, { entry: id, payload: replacement, codecs });
      expect(result.container).toBe("fat object");
      const want = bundleNative(d, "o", targets, inputs.map((name, k) => (k === at ? (what === "host" ? "host2.o" : "new") : name)), "want.o");
      expect(Buffer.from(result.output).equals(want)).toBe(true);
    },
  );

  it.each([[0], [1], [2]] as const)("archive of bundles and fat objects %i (llvm-ar-19 rcD)", (i) => {
    const d = dir();
    const orig = join(d, "orig");
    const want = join(d, "want");
    mkdirSync(orig);
    mkdirSync(want);
    for (const at of [orig, want]) {
      writeFileSync(join(at, "h.c"), "int api_entry(int x) { return x + 1; }\nint api_other;\n");
      run(nativeTool("clang-19")!, ["--target=x86_64-unknown-linux-gnu", "-O1", "-c", "h.c", "-o", "host.o"], at);
    }
    const members = [
      { name: "kernels.bc", type: "bc", targets: targetList() },
      { name: "fat.o", type: "o", targets: targetList().map((t) => (t === HOST ? "host-x86_64-unknown-linux-gnu" : t)) },
      { name: "a-long-member-name-for-the-table.bc", type: "bc", targets: targetList() },
    ];
    // The member whose entry goes, and the entry: a device one, picked by its bundle's index (the members in order).
    const chosen = i % members.length;
    const target = pick(members[chosen].targets.filter((t) => !t.startsWith("host-")));
    const replacement = payload(false, 9000);
    const payloads = members.map((member) => member.targets.map(() => payload(false)));
    for (const [at, replacing] of [[orig, false], [want, true]] as const) {
      for (const [m, member] of members.entries()) {
        member.targets.forEach((t, k) => {
          const bytes = replacing && m === chosen && t === target ? replacement : payloads[m][k];
          writeFileSync(join(at, `${member.name}.p${k}`), bytes);
        });
        bundleNative(at, member.type, member.targets, member.targets.map((t, k) => (t.startsWith("host-") && member.type === "o" ? "host.o" : `${member.name}.p${k}`)),
          member.name, member.type === "bc" ? ["-bundle-align=4096"] : []);
        chmodSync(join(at, member.name), 0o644);
      }
      writeFileSync(join(at, "readme.txt"), `not a bundle ${i}\n`, { mode: 0o644 });
      run(nativeTool("llvm-ar-19")!, ["rcD", "lib.a", ...members.map((m) => m.name), "readme.txt"], at);
    }
    const original = readFileSync(join(orig, "lib.a"));
    const result = replaceWith(original, { entry: target, bundle: chosen, payload: replacement, codecs });
    expect(result.container).toBe("archive");
    expect(result.bundles).toBe(members.length);
    expect(result.replaced).toEqual([`member ${members[chosen].name}`]);
    expect(Buffer.from(result.output).equals(readFileSync(join(want, "lib.a")))).toBe(true);
  });

  /** clang-offload-packager-19 of three images (one binary each); the image at `at` is `new.<ext>` in the second run. */
  function packagerCase(d: string, at: number): { original: Buffer; want: Buffer; id: string; replacement: Uint8Array } {
    const images = [
      { file: "a.o", triple: "amdgcn-amd-amdhsa", arch: "gfx90a", kind: "hip", id: "hip-amdgcn-amd-amdhsa--gfx90a" },
      { file: "b.bc", triple: "nvptx64-nvidia-cuda", arch: "sm_70", kind: "cuda", id: "cuda-nvptx64-nvidia-cuda--sm_70" },
      { file: "c.o", triple: "amdgcn-amd-amdhsa", arch: "gfx1100", kind: "openmp", id: "openmp-amdgcn-amd-amdhsa--gfx1100" },
    ];
    images.forEach((image) => writeFileSync(join(d, image.file), payload(false)));
    const replacement = payload(false, 9000);
    const ext = images[at].file.split(".")[1];
    writeFileSync(join(d, `new.${ext}`), replacement);
    const args = (swap: boolean) => images.map((image, k) =>
      `--image=file=${swap && k === at ? `new.${ext}` : image.file},triple=${image.triple},arch=${image.arch},kind=${image.kind}`);
    run(nativeTool(PACKAGER)!, ["-o", "orig.bin", ...args(false)], d);
    run(nativeTool(PACKAGER)!, ["-o", "want.bin", ...args(true)], d);
    return { original: readFileSync(join(d, "orig.bin")), want: readFileSync(join(d, "want.bin")), id: images[at].id, replacement };
  }

  it.each([[0], [1], [2]] as const)("offload binaries (clang-offload-packager-19), image %i replaced", (at) => {
    const d = dir();
    const { original, want, id, replacement } = packagerCase(d, at);
    const result = replaceWith(original, { entry: id, payload: replacement, codecs });
    expect(result.container).toBe("offload binary");
    expect(result.bundles).toBe(3);
    expect(result.replaced).toEqual([`offload binary ${at}`]);
    expect(Buffer.from(result.output).equals(want)).toBe(true);
  });

  it("an object's .llvm.offloading section (clang-19 -fembed-offload-object)", () => {
    const d = dir();
    const { want, id, replacement } = packagerCase(d, 1);
    writeFileSync(join(d, "h.c"), "int api_entry(int x) { return x + 1; }\n");
    run(nativeTool("clang-19")!, ["--target=x86_64-unknown-linux-gnu", "-O1", "-c", "h.c", "-Xclang", "-fembed-offload-object=orig.bin", "-o", "orig.o"], d);
    const result = replaceWith(readFileSync(join(d, "orig.o")), { entry: id, payload: replacement, codecs });
    expect(result.container).toBe("object with .llvm.offloading");
    expect(result.replaced).toEqual(["section .llvm.offloading, offload binary 1"]);
    run(nativeTool("llvm-objcopy-19")!, ["--update-section=.llvm.offloading=want.bin", "orig.o", "want.o"], d);
    expect(Buffer.from(result.output).equals(readFileSync(join(d, "want.o")))).toBe(true);
    expect(want.length).toBeGreaterThan(0);
  });
});
