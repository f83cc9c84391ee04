// Start-up test: each wrapper module, ours and the native tool's, is compiled with llc (-filetype=obj
// -relocation-model=pic), linked with a C stub runtime (test/fixtures/wrapper/stub-runtime.c) and run. The stub
// prints what the constructors and destructors hand it: the registered images byte for byte, the image infos in
// order, the CUDA/HIP registrations driven by offload entries. Ours must print exactly what the native module
// prints; the image-info variant (no native tool) is checked against the seed: infos in order before
// __tgt_register_lib, and the linked .offload_arch_list section is the NUL-terminated target IDs back to back.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { WrapImagesOptions } from "../../src/wrapper/index.js";
import { wrapImages } from "../../src/wrapper/index.js";
import { offloadBinary } from "./offload-binary-fixture.js";
import { hasNative, nativeTool, runNative } from "../native.js";

const STUB = join(import.meta.dirname, "../fixtures/wrapper/stub-runtime.c");
const root = mkdtempSync(join(tmpdir(), "offload-kit-wrapper-startup-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const CC = hasNative("cc") ? "cc" : "clang-19";
let counter = 0;

/** Compiles, links and runs one module; returns its stdout. */
function runModule(bitcode: Uint8Array, llc: string, env: Record<string, string> = {}): { stdout: string; program: string } {
  const base = join(root, `m${counter++}`);
  writeFileSync(`${base}.bc`, bitcode);
  const compiled = runNative(llc, ["-filetype=obj", "-relocation-model=pic", `${base}.bc`, "-o", `${base}.o`]);
  expect(compiled.stderr).toBe("");
  const linked = spawnSync(nativeTool(CC)!, [`${base}.o`, STUB, "-o", base], { encoding: "utf8" });
  expect(linked.stderr).toBe("");
  const run = spawnSync(base, [], { encoding: "utf8", env: { ...process.env, ...env } });
  expect(run.status).toBe(0);
  return { stdout: run.stdout, program: base };
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

const enc = (text: string) => new TextEncoder().encode(text);
const IMAGES = [enc("DEVIMG"), Uint8Array.of(0, 1, 2, 0xff, 0x7f, 0), new Uint8Array(0), enc("hello world!\n")];

function nativeModule(tool: string, args: string[], images: Uint8Array[]): Uint8Array {
  const dir = mkdtempSync(join(root, "native-"));
  const names = images.map((bytes, i) => {
    writeFileSync(join(dir, `img${i}.bin`), bytes);
    return `img${i}.bin`;
  });
  const run = runNative(tool, [...args, "-o", "out.bc", ...names], { cwd: dir });
  expect(run.stderr).toBe("");
  return new Uint8Array(readFileSync(join(dir, "out.bc")));
}

const ready = hasNative("llc-19") && hasNative("llc-22") && hasNative(CC);

describe.runIf(ready && hasNative("clang-offload-wrapper-14"))("start-up, clang-offload-wrapper 14 flavour (llc-19)", () => {
  it("registers every image byte for byte at priority 1 and unregisters at exit, as the native module does", () => {
    const options: WrapImagesOptions = { triple: "x86_64-pc-linux-gnu", images: IMAGES.map((bytes) => ({ bytes })) };
    const ours = runModule(wrapImages(options), "llc-19").stdout;
    const native = runModule(nativeModule("clang-offload-wrapper-14", ["--target=x86_64-pc-linux-gnu"], IMAGES), "llc-19").stdout;
    expect(ours).toBe(native);
    const expected = [
      `register_lib images=${IMAGES.length} host_entries_bytes=0`,
      ...IMAGES.map((bytes, i) => `image ${i} size=${bytes.length} entries_bytes=0 bytes=${hex(bytes)}`),
      "main",
      `unregister_lib images=${IMAGES.length}`,
    ];
    expect(ours.trimEnd().split("\n")).toEqual(expected);
  });

  it("image-info variant: infos in order before __tgt_register_lib, .offload_arch_list holds the target IDs back to back", () => {
    const archs = ["gfx906", "gfx90a:xnack+", "gfx906", "gfx1030"];
    const options: WrapImagesOptions = { triple: "x86_64-pc-linux-gnu", images: IMAGES.map((bytes, i) => ({ bytes, arch: archs[i] })) };
    const { stdout, program } = runModule(wrapImages(options), "llc-19");
    expect(stdout.trimEnd().split("\n")).toEqual([
      ...archs.map((arch, i) => `register_image_info version=1 image=${i} of=${archs.length} arch=${arch} opts=(null)`),
      `register_lib images=${IMAGES.length} host_entries_bytes=0`,
      ...IMAGES.map((bytes, i) => `image ${i} size=${bytes.length} entries_bytes=0 bytes=${hex(bytes)}`),
      "main",
      `unregister_lib images=${IMAGES.length}`,
    ]);
    const section = join(root, `arch-list-${counter++}`);
    const dumped = runNative("llvm-objcopy-19", [`--dump-section=.offload_arch_list=${section}`, program, join(root, `copy-${counter++}`)]);
    expect(dumped.stderr).toBe("");
    expect(readFileSync(section).toString("latin1")).toBe(archs.map((arch) => `${arch}\0`).join(""));
  });
});

describe.runIf(ready && hasNative("llvm-offload-wrapper-22"))("start-up, llvm-offload-wrapper 22 flavour (llc-22)", () => {
  // The stub defines ten 56-byte entries in llvm_offload_entries: every image sees them.
  it("openmp: images (an OffloadBinary's payload included) registered at priority 101, unregistered through atexit", () => {
    const payload = Uint8Array.of(9, 8, 7, 6, 5);
    const images = [...IMAGES, offloadBinary([payload])];
    const ours = runModule(wrapImages({ flavour: "llvm-offload-wrapper-22", images: images.map((bytes) => ({ bytes })) }), "llc-22").stdout;
    const native = runModule(nativeModule("llvm-offload-wrapper-22", ["--kind=openmp"], images), "llc-22").stdout;
    expect(ours).toBe(native);
    expect(ours).toContain(`image ${IMAGES.length} size=5 entries_bytes=560 bytes=${hex(payload)}`);
  });

  for (const kind of ["cuda", "hip"] as const) {
    it(`${kind}: the fatbinary and every ${kind} offload entry are registered as the native module does`, () => {
      const image = enc(`${kind} fatbin bytes\0\x01`);
      const env = { FATBIN_SIZE: String(image.length) };
      const ours = runModule(wrapImages({ flavour: "llvm-offload-wrapper-22", kind, images: [{ bytes: image }] }), "llc-22", env).stdout;
      const native = runModule(nativeModule("llvm-offload-wrapper-22", [`--kind=${kind}`], [image]), "llc-22", env).stdout;
      expect(ours).toBe(native);
      const prefix = kind === "cuda" ? "__cuda" : "__hip";
      expect(ours).toContain(`${prefix}RegisterFatBinary magic=${kind === "cuda" ? "466243b1" : "48495046"} version=1 bytes=${hex(image)}`);
      expect(ours).toContain(`${prefix}RegisterFunction name=${kind}_kernel limit=-1 rest_null=1`);
      expect(ours).toContain(`${prefix}RegisterManagedVar name=${kind}_managed size=8`);
      expect(ours.includes("RegisterSurface")).toBe(kind === "hip");
      expect(ours.includes("__cudaRegisterFatBinaryEnd")).toBe(kind === "cuda");
    });
  }
});
