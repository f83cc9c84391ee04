/**
 * `offload-binary`: a drop-in for llvm-offload-binary 22 (LLVM's successor of clang-offload-packager). Flags,
 * help, messages and exit codes are the native tool's; the work is done by src/packager/node.ts, with 22's
 * rules where they differ from the 19 packager's (`offload-packager`):
 *
 * - `kind=` numbers as 22 does (llvm PR #135809): openmp 1, cuda 2, hip 4, sycl 8 (19: hip 3, no sycl), both
 *   when writing and when an extraction filter compares kinds. So `--image=kind=hip` finds the HIP images
 *   22 writes, not those 19 wrote, as natively.
 * - only `file` is a required image argument ("'file' is a required image arguments", sic); 19 also needs `triple`.
 * - with neither `-o` nor an input it prints the help (as `-h` does) and exits 0; 19 does nothing.
 *
 * Like 22.1.8, it reads version 1 binaries only, by default. With OFFLOAD_BINARY_LLVM_VERSION=23 in the environment it
 * works as LLVM 23's llvm-offload-binary: all images packaged into one version 2 binary (llvm PRs #169425 and
 * #197456), `.spv` files as IMG_SPIRV (#180269), versions 1 and 2 read, and extraction without `file=` as #184774
 * made it (`Extracted: <name>` lines, no `-<arch>` when the arch is empty, nested offload binaries opened, every
 * image extracted when no `--image` is given). Flags, help and messages stay 22's. An environment variable rather
 * than a flag, so the command line, help and typo suggestions stay byte-equal to 22's. Documented differences are the packager's: a failure leaves
 * no output at all, a generated name has '/' replaced by '_', and offload binaries inside LLVM bitcode or COFF
 * objects are refused with an error.
 */
import { PACKAGE_VERSION } from "../version.js";
import type { CliIO } from "./io.js";
import { offloadBinaryToolSpec } from "./offload-binary-options.js";
import { runOffloadBinaryTool } from "./offload-packager.js";

/** The LLVM release whose llvm-offload-binary this one follows. */
export const OFFLOAD_BINARY_LLVM_VERSION = "22.1.8";

export const OFFLOAD_BINARY_VERSION_TEXT = `offload-kit offload-binary version ${OFFLOAD_BINARY_LLVM_VERSION} (offload-kit ${PACKAGE_VERSION})\n`;

/** Selects the LLVM release whose offload binary format `offload-binary` writes: 22 (the default) or 23. */
export const OFFLOAD_BINARY_LLVM_ENV = "OFFLOAD_BINARY_LLVM_VERSION";

export function runOffloadBinary(argv0: string, args: readonly string[], io: CliIO): number {
  const wanted = io.env[OFFLOAD_BINARY_LLVM_ENV] ?? "";
  if (wanted !== "" && wanted !== "22" && wanted !== "23") {
    io.stderr(`${argv0}: error: ${OFFLOAD_BINARY_LLVM_ENV}=${wanted} is not supported (22 or 23)\n`);
    return 1;
  }
  const formatVersion = wanted === "23" ? 2 : 1;
  return runOffloadBinaryTool({ spec: offloadBinaryToolSpec(OFFLOAD_BINARY_VERSION_TEXT), llvm: 22, helpWhenIdle: true, formatVersion }, argv0, args, io);
}
