/**
 * The demangler against `llvm-cxxfilt-19`: every kernel name of Debian's librocrand and librocsparse (read by our
 * own kernel listing) must demangle exactly as llvm-cxxfilt prints it; the rates reached are recorded here and the
 * test fails below them. Hand-picked names cover the rest of the subset, and hostile names must give `undefined`, not throw.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { collectKernels } from "../../src/kernels/collect.js";
import { demangle, demangleOrKeep } from "../../src/kernels/demangle.js";
import { withCcobPrefetch } from "../../src/compress/node/decompress.js";
import { withFile } from "../../src/node/file-source.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const LIBROCRAND = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
/** Agreement reached over librocrand's kernel names (all 560, 80 distinct): every one. */
const ROCRAND_AGREEMENT = 1.0;
const LIBROCSPARSE = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
/** Agreement reached over librocsparse's 11,431 distinct kernel names (88,137 kernels): every one. */
const ROCSPARSE_AGREEMENT = 1.0;

function cxxfilt(names: readonly string[]): string[] {
  const run = runNative("llvm-cxxfilt-19", [], { input: Buffer.from(names.join("\n") + "\n") });
  expect(run.status).toBe(0);
  return run.stdout.toString("utf8").split("\n").slice(0, names.length);
}

describe("demangle", () => {
  it.skipIf(!hasNative("llvm-cxxfilt-19") || !existsSync(LIBROCRAND))("agrees with llvm-cxxfilt-19 on every kernel name of librocrand", () => {
    const found = withFile(LIBROCRAND, (s) => withCcobPrefetch({}, (hooks) => collectKernels(s, hooks)));
    const names = found.codeObjects.flatMap((c) => c.kernels.map((k) => k.name));
    expect(names.length).toBe(560);
    const want = cxxfilt(names);
    const agree = names.filter((n, i) => demangleOrKeep(n) === want[i]).length;
    expect(agree / names.length).toBeGreaterThanOrEqual(ROCRAND_AGREEMENT);
  }, HANG_MS);

  it.skipIf(!hasNative("llvm-cxxfilt-19") || !existsSync(LIBROCSPARSE))("agrees with llvm-cxxfilt-19 on every distinct kernel name of librocsparse", () => {
    const found = withFile(LIBROCSPARSE, (s) => withCcobPrefetch({}, (hooks) => collectKernels(s, { ...hooks, keepMetadata: false })));
    const names = [...new Set(found.codeObjects.flatMap((c) => c.kernels.map((k) => k.name)))];
    expect(names.length).toBe(11431);
    const want = cxxfilt(names);
    const agree = names.filter((n, i) => demangleOrKeep(n) === want[i]).length;
    expect(agree / names.length).toBeGreaterThanOrEqual(ROCSPARSE_AGREEMENT);
  }, HANG_MS);

  const samples = [
    "_ZN12rocrand_host6detailL15generate_kernelILj1Ed25sobol_normal_distributionIdEEEvPT0_mPKjjT1_",
    "_Z4fillIfLj256EEvPT_N2ns3BoxIS0_Li4EEEj",
    "_Z5scalePff",
    "_ZN12_GLOBAL__N_13fooEv",
    "_Z1fPFviERA10_KcPA3_i",
    "_Z1fIJifEEvDpT_",
    "_ZN3FooIiEC2Ev",
    "_ZN3FooD1Ev",
    "_ZNK3Foo3getEv",
    "_Z1fILb1ELc97ELl5ELm6ELx7ELy8ELs9ELh3EEvv",
    "_Z1fI1EILS0_n3EEvv",
    "_ZZ4mainE1x",
    "_Z1fDv4_f",
    "_ZN2ns1fIiEEvT_.cold",
    "_ZTV3Foo",
    "_ZNSt6vectorIiSaIiEE9push_backERKi",
    "_Z1fu6__bf16DF16_",
    "_ZN1AB5cxx113fooEv",
    "_Z1fPKPVi",
    "_Z1fM1AFivE",
    "_ZplRK1AS1_",
    "_ZL32gtsv_interleaved_batch_lu_kernelILj128E21rocsparse_complex_numIdEEviiiPT0_S3_S3_S3_PiS3_",
  ];
  it.skipIf(!hasNative("llvm-cxxfilt-19"))("hand-picked names of the subset, as llvm-cxxfilt-19 prints them", () => {
    const want = cxxfilt(samples);
    expect(samples.map(demangleOrKeep)).toEqual(want);
  });

  it("gives undefined, never throws, on what it cannot read", () => {
    const hostile = [
      "", "_Z", "main", "_ZN", "_ZNE", "_Z1", "_Z999999999999999999999f", `_Z${"P".repeat(100000)}i`, `_Z1fI${"I".repeat(5000)}`,
      "_ZS_", "_ZT_", "_Z1fT_", "_Z1fS9999_", `_ZN${"1a".repeat(20000)}E`, "_Z1fLi", "_Z1fIXadL_Z1gEEEvv", "_ZN1AC1Ev",
    ];
    for (const name of hostile) expect(() => demangle(name)).not.toThrow();
    expect(demangle("main")).toBeUndefined();
    expect(demangle(`_Z${"P".repeat(100000)}i`)).toBeUndefined();
    expect(demangleOrKeep("_Z1fS9999_")).toBe("_Z1fS9999_");
    // Random bytes after _Z: never an exception.
    let seed = 1;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    const alphabet = "_0123456789NEISTLZPKRVOFAMDCvijfdbcmlxyhstuU";
    for (let i = 0; i < 20000; i++) {
      let name = "_Z";
      const length = next() % 40;
      for (let j = 0; j < length; j++) name += alphabet[next() % alphabet.length];
      expect(() => demangle(name)).not.toThrow();
    }
  });
});
