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
 * Like 22.1.8, it reads version 1 binaries only. Documented differences are the packager's: a failure leaves
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

export function runOffloadBinary(argv0: string, args: readonly string[], io: CliIO): number {
  return runOffloadBinaryTool({ spec: offloadBinaryToolSpec(OFFLOAD_BINARY_VERSION_TEXT), llvm: 22, helpWhenIdle: true }, argv0, args, io);
}
