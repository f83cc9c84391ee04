/**
 * The target-ID layer against the installed clang-offload-bundler-14/-19/-22 (spec/bundler.md §1.1, §3;
 * spec/target-id.md §3–4). Each version's block is skipped when its binary is not on PATH.
 *
 * What is compared, per version:
 * - offload-arch names: bundle `hip-amdgcn-amd-amdhsa--<name>` / `openmp-nvptx64-nvidia-cuda--<name>` for every
 *   candidate name, read the stored IDs back with `-list`, and compare with `normaliseBundleId`;
 * - stored IDs for assorted `-targets` strings (triples with 3–5 fields, odd arch spellings, features);
 * - "invalid target" / 22 format messages and exit codes, one call per target;
 * - "Cannot bundle inputs with conflicting targets" verdicts for many target-ID sets (well-formed IDs only: with a
 *   malformed one the native check reads an empty optional, and its verdict or crash varies between builds);
 * - code-object compatibility observed through unbundling (19/22 per file, 14 through an archive): bundle entry A,
 *   request target B, see whether B's output received A's payload;
 * - the xnack/sramecc columns of the processor table, through hip→hipv4 matching (never an exact match, so the
 *   target IDs must parse with their features).
 *
 * Native calls run two at a time in one temporary directory.
 */

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasNative } from "../native.js";
import {
  AMDGCN_PROCESSORS,
  OFFLOAD_ARCH_NAMES,
  R600_PROCESSORS,
  TARGET_FORMAT_MESSAGE,
  bundleIdString,
  checkOffloadBundleId,
  findConflictingTargets,
  formatClangInvalidTargetIdMessage,
  formatConflictMessage,
  formatInvalidTargetMessage,
  isCodeObjectCompatible,
  normaliseBundleId,
  parseOffloadTarget,
  parseTargetId,
  parseTargetIdFormat,
  resolveAmdgcnProcessor,
  type LlvmVersion,
} from "../../src/target-id/index.js";

const VERSIONS = [14, 19, 22] as const;

function binary(version: LlvmVersion): string {
  return `clang-offload-bundler-${version}`;
}

/** Through test/native.ts, so CI (OFFLOAD_KIT_REQUIRE_NATIVE=1) fails instead of skipping. */
function onPath(command: string): boolean {
  return hasNative(command);
}

const available = Object.fromEntries(VERSIONS.map((version) => [version, onPath(binary(version))])) as Record<LlvmVersion, boolean>;
const hasAr = onPath("ar");

/** An ID the target-ID parser refuses: for these LLVM's conflict check reads an empty optional (undefined behaviour). */
function hasMalformedTargetId(target: string, version: LlvmVersion): boolean {
  return !parseTargetIdFormat(parseOffloadTarget(target, version).targetId).ok;
}

const workDir = mkdtempSync(join(tmpdir(), "target-id-native-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

let fileCounter = 0;
function tempPath(suffix: string): string {
  return join(workDir, `f${fileCounter++}${suffix}`);
}

function writeTemp(content: string, suffix = ".in"): string {
  const path = tempPath(suffix);
  writeFileSync(path, content);
  return path;
}

interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

// Two native processes at a time: the machine has two cores shared with other work.
const MAX_RUNNING = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function run(command: string, args: readonly string[]): Promise<RunResult> {
  if (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await new Promise<RunResult>((resolve) => {
      execFile(command, args, { cwd: workDir, encoding: "utf8" }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 128;
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** `-input`/`-output` exist from 19 on; 14 only has the comma lists. */
function ioArgs(version: LlvmVersion, inputs: readonly string[], outputs: readonly string[]): string[] {
  if (version === 14) return [`-inputs=${inputs.join(",")}`, `-outputs=${outputs.join(",")}`];
  return [...inputs.map((input) => `-input=${input}`), ...outputs.map((output) => `-output=${output}`)];
}

/** The message of the last `error:` line of a failed run. */
function errorMessage(result: RunResult): string | undefined {
  const line = result.stderr.split("\n").filter((text) => text.includes("error: ")).at(-1);
  return line?.substring(line.indexOf("error: ") + "error: ".length);
}

/** Bundle `targets` into a text bundle and list the stored IDs (text bundles list in file order). */
async function storedIds(version: LlvmVersion, targets: readonly string[]): Promise<string[]> {
  const payload = writeTemp("x");
  const output = tempPath(".i");
  const bundled = await run(binary(version), ["-type=i", `-targets=${targets.join(",")}`,
    ...ioArgs(version, targets.map(() => payload), [output])]);
  expect(bundled.stderr.includes("error"), `bundling ${targets.join(",")}: ${bundled.stderr}`).toBe(false);
  expect(bundled.code).toBe(0);
  const listed = await run(binary(version), ["-type=i", "-list", ...(version === 14 ? [`-inputs=${output}`] : [`-input=${output}`])]);
  expect(listed.code).toBe(0);
  return listed.stdout.split("\n").filter((line) => line !== "");
}

function needsHost(targets: readonly string[]): boolean {
  return targets.some((target) => !target.startsWith("hip-") && !target.startsWith("hipv4-"));
}

const HOST = "host-x86_64-unknown-linux-gnu";

/** The first target-list error the 19/22 tool reports, in its order: 22's field count, kind/triple, conflicts. */
function predictTargetsError(targets: readonly string[], version: LlvmVersion): string | undefined {
  for (const target of targets) {
    if (version === 22 && !checkOffloadBundleId(target)) return TARGET_FORMAT_MESSAGE;
    const invalid = formatInvalidTargetMessage(target, parseOffloadTarget(target, version));
    if (invalid !== undefined) return invalid;
  }
  const conflict = findConflictingTargets(targets.map((target) => parseOffloadTarget(target, version)));
  return conflict === undefined ? undefined : formatConflictMessage(conflict);
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs.

/** Every name any table here knows, the aliases and R600 names, and near misses. */
const ARCH_CANDIDATES: readonly string[] = [...new Set([
  ...VERSIONS.flatMap((version) => [...OFFLOAD_ARCH_NAMES[version]]),
  ...AMDGCN_PROCESSORS.flatMap((processor) => [processor.name, ...processor.aliases]),
  ...R600_PROCESSORS.flatMap((processor) => [processor.name, ...processor.aliases]),
  "generic-hsa", "gfx12-5-generic", "gfx13-generic", "gfx1310", "gfx1154", "gfx1010a", "sm_999", "sm_100f", "sm_89a",
  "sm_1", "compute_70", "Generic", "GFX906", "pvc", "unknown", "UNUSED",
])].filter((name) => name !== "");

/** Targets every version accepts (valid kind and arch, 5 or 6 '-' fields), grouped so no group conflicts. */
const VALID_TARGET_GROUPS: readonly (readonly string[])[] = [
  [
    "host-x86_64-unknown-linux-gnu",
  ],
  [
    "host-x86_64-pc-linux-gnu-",
  ],
  [
    "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+",
    "hip-amdgcn-amd-amdhsa--gfx908:xnack-:sramecc+",
    "hip-amdgcn-amd-amdhsa-unknown-gfx90a",
    "hip-amdgcn-amd-amdhsa-amdgiz-gfx1030",
    "hip-amdgcn-amd-amdhsa--gfx1100:foo+",
    "hip-amdgcn-amd-amdhsa--gfx1030:xnack",
    "hip-amdgcn-amd-amdhsa--foo",
    "hip-amdgcn-amd-amdhsa--sm_70",
    "hip-amdgcn-amd-amdhsa--",
    "hip-amdgcn-amd-amdhsa--gfx9-generic",
    "hip-amdgcn-amd-amdhsa--gfx10-3-generic:xnack+",
    "hip-amdgcn-amd-amdhsa--gfx942:xnack+:sramecc-",
    "hip-amdgcn-amd-amdhsa--amdgcnspirv",
    "hip-spirv64-amd-amdhsa--amdgcnspirv",
    "hip-amdgcn-amd-amdhsa--gfx906-gfx908",
    "hipv4-amdgcn-amd-amdhsa--gfx90c",
    "hipv4-amdgcn-amd-amdhsa-gnu-gfx90c",
    "hip-amdgcn-amd-amdpal-gnu-gfx1150",
    "hip-amdgcn-unknown-amdhsa-unknown-gfx1151",
    "hip-r600-unknown-unknown-unknown-cayman",
    "hip-nvptx64-nvidia-cuda--sm_90a",
  ],
  [
    HOST,
    "openmp-nvptx64-nvidia-cuda--sm_70",
    "openmp-nvptx64-nvidia-cuda-unknown-sm_80",
    "openmp-nvptx64-nvidia-cuda--sm_999",
    "openmp-x86_64-pc-linux-gnu-",
    "openmp-x86_64-linux-gnu-unknown-",
    "openmp-i686-pc-windows-msvc-",
    "openmp-x86_64-w64-mingw32-gnu-",
    "openmp-armv7-none-eabi-unknown-",
    "openmp-armv7a-linux-androideabi-unknown-",
    "openmp-arm64-apple-darwin-macho-",
    "openmp-aarch64-unknown-linux-gnu-sm_70",
    "openmp-powerpc64le-ibm-linux-gnu-",
    "openmp-s390x-ibm-zos-unknown-",
    "openmp-wasm32-unknown-wasi-unknown-",
    "openmp-x86_64-suse-linux-gnueabi-",
    "openmp-spirv64-intel-unknown-unknown-",
    "openmp-thumbv6m-none-eabi-unknown-",
    "openmp-mipsel-unknown-linux-gnu-",
    "openmp-x86_64-unknown-cygwin-unknown-",
    "openmp-amdgcn-amd-amdhsa--gfx1030",
    "openmp-x86_64-gnu-linux-pc-",
    "openmp-i386-mingw32-unknown-unknown-",
    "openmp-x86_64-pc-windows-elf-",
    "openmp-x86_64-pc-win32-gnu-",
    "openmp-armv7-none-unknown-eabi-",
    "openmp-x86_64-none-unknown-gnu-",
    "openmp-x86_64-unknown-linux-androideabi21-",
    "openmp-x86_64-unknown-linux-androideabi-",
    "openmp-i686-windows-unknown-coff-",
  ],
  [
    "hip-amdgcn-amd-amdhsa-gfx906",
    "hip-amdgcn-amd-amdhsa-gfx908:xnack+",
  ],
];

/** Valid from 19 on (arches 14 does not know). */
const VALID_TARGET_GROUPS_SINCE_19: readonly (readonly string[])[] = [
  [
    HOST,
    "openmp-dxil-unknown-shadermodel6.5-compute-",
    "openmp-dxil-unknown-shadermodel6.2-unknown-",
    "openmp-dxilv1.3-unknown-shadermodel6.5-compute-",
    "openmp-spirv-unknown-vulkan1.3-unknown-",
    "openmp-loongarch64-unknown-linux-gnu-",
    "openmp-xtensa-unknown-unknown-unknown-",
  ],
];

/** Targets some version rejects: bad kind, unknown arch, or not 5/6 fields (22). */
const INVALID_TARGETS: readonly string[] = [
  "foo",
  "hip",
  "hip-x86_64",
  "cuda-nvptx64-nvidia-cuda--sm_70",
  "hip-foo-amd-amdhsa--gfx906",
  "sycl-foo-amd-amdhsa--gfx906",
  "hip-gfx906-amd-amdhsa--gfx906",
  "host-x86_64-unknown-linux",
  "openmp-nvptx64-nvidia-cuda",
  "hip-amdgcn-amd-amdhsa",
  "hip-le32-unknown-linux-gnu-",
  "hip-riscv64be-unknown-linux-gnu-",
  "hip-spirv-unknown-vulkan-unknown-",
  "hip-armvx-unknown-linux-gnu-",
  "HIP-amdgcn-amd-amdhsa--gfx906",
];

/** Target-ID sets for one `hip-amdgcn-amd-amdhsa` group (spec/target-id.md §4 and measured malformed cases). */
const CONFLICT_SETS: readonly (readonly string[])[] = [
  ["gfx906", "gfx906:xnack+"],
  ["gfx906:xnack+", "gfx906"],
  ["gfx906:sramecc+", "gfx906:xnack+"],
  ["gfx906:xnack+", "gfx906:xnack-"],
  ["gfx906:sramecc+:xnack+", "gfx906:xnack+"],
  ["gfx906:xnack+", "gfx906:sramecc+:xnack+"],
  ["gfx906:sramecc-:xnack+", "gfx906:xnack-:sramecc+"],
  ["gfx906", "gfx908:xnack+", "gfx908:sramecc+"],
  ["gfx90a:xnack+", "gfx90a:xnack-", "gfx90a"],
  ["gfx1030", "gfx1030:xnack+"],
  ["gfx906:xnack", "gfx906:xnack+"],
  ["gfx906:xnack", "gfx906"],
  ["gfx906:xnack+:foo", "gfx906:xnack+"],
  ["gfx906:xnack+:sramecc", "gfx906:sramecc+"],
  ["gfx906:xnack+:sramecc", "gfx906:xnack-"],
  ["gfx906:xnack+:bad", "gfx908:sramecc+:bad"],
  ["gfx906:xnack+:bad", "gfx906:sramecc+:bad"],
  ["gfx900", "gfx906:xnack+:bad"],
  ["gfx900:sramecc+", "gfx906:xnack+:bad"],
  ["gfx900:", "gfx906:xnack+:bad"],
  ["gfx900:xnack+:", "gfx906:xnack+:bad"],
  ["gfx900", "gfx906:bad", "gfx906:xnack+:bad"],
  ["gfx900", "gfx902::", "gfx906:xnack+:bad"],
  ["gfx900", "gfx902:xnack+:sramecc", "gfx906:xnack+:bad"],
  ["gfx900", "gfx906:sramecc+", "gfx906:xnack+:bad"],
  ["gfx906:xnack+:bad", "gfx906:xnack-:sramecc+:bad"],
  ["gfx906::xnack+", "gfx906:xnack+"],
  ["gfx906:+", "gfx906"],
];

/** Groups of full targets (several kinds/triples), for the grouping and empty-ID behaviour. */
const CONFLICT_TARGET_SETS: readonly (readonly string[])[] = [
  ["hip-amdgcn-amd-amdhsa", "hip-amdgcn-amd-amdhsa--gfx906:xnack+:bad"],
  ["hip-amdgcn-amd-amdhsa--", "hip-amdgcn-amd-amdhsa--gfx906:xnack+:bad"],
  ["hip-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+:bad", "hipv4-amdgcn-amd-amdhsa--gfx906:xnack-:sramecc+"],
  ["hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+"],
  ["hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"],
  ["hip-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+"],
  ["hip-amdgcn-amd-amdhsa--gfx1100:foo+", "hip-amdgcn-amd-amdhsa--gfx900:xnack+:gfx908"],
  ["hip-amdgcn-amd-amdhsa--gfx906-gfx908", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"],
];

interface CompatCase {
  readonly entry: string;
  readonly request: string;
  readonly hipOpenmpCompatible?: boolean;
}

const AMDHSA = "amdgcn-amd-amdhsa-";
const COMPAT_CASES: readonly CompatCase[] = [
  { entry: `hip-${AMDHSA}-gfx908`, request: `hip-${AMDHSA}-gfx908:xnack+` },
  { entry: `hip-${AMDHSA}-gfx908:xnack+`, request: `hip-${AMDHSA}-gfx908` },
  { entry: `hip-${AMDHSA}-gfx908:xnack+`, request: `hip-${AMDHSA}-gfx908:sramecc+:xnack+` },
  { entry: `hip-${AMDHSA}-gfx908:sramecc+:xnack+`, request: `hip-${AMDHSA}-gfx908:xnack+` },
  { entry: `hip-${AMDHSA}-gfx908:xnack+:sramecc+`, request: `hip-${AMDHSA}-gfx908:sramecc+:xnack+` },
  { entry: `hip-${AMDHSA}-gfx908`, request: `hipv4-${AMDHSA}-gfx908` },
  { entry: `hip-${AMDHSA}-gfx908`, request: `openmp-${AMDHSA}-gfx908` },
  { entry: `hip-${AMDHSA}-gfx908`, request: `openmp-${AMDHSA}-gfx908`, hipOpenmpCompatible: true },
  { entry: `openmp-${AMDHSA}-gfx908`, request: `hipv4-${AMDHSA}-gfx908`, hipOpenmpCompatible: true },
  { entry: `hip-${AMDHSA}-gfx906`, request: `hip-${AMDHSA}-gfx908` },
  { entry: `hip-${AMDHSA}-gfx1030:xnack+`, request: `hip-${AMDHSA}-gfx1030:xnack+` },
  { entry: `hip-${AMDHSA}-gfx1030:xnack+`, request: `hipv4-${AMDHSA}-gfx1030:xnack+` },
  { entry: `hip-${AMDHSA}-gfx906:xnack`, request: `hipv4-${AMDHSA}-gfx906:xnack` },
  { entry: `hip-${AMDHSA}-gfx906:xnack+`, request: `hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+` },
  { entry: `hip-${AMDHSA}-gfx906`, request: "hip-amdgcn-amd-amdhsa-gfx906" },
  { entry: `hip-${AMDHSA}-foo`, request: `hipv4-${AMDHSA}-foo` },
  { entry: "hip-x86_64-unknown-linux-gnu-", request: "hipv4-x86_64-unknown-linux-gnu-" },
  { entry: "hip-x86_64-unknown-linux-gnu-", request: "hip-x86_64-unknown-linux-gnu-" },
  { entry: "hip-x86_64-unknown-linux-gnu-gfx906", request: "hip-x86_64-unknown-linux-zzz-gfx906" },
  { entry: "hip-x86_64-w64-windows-gnu-gfx906", request: "hip-x86_64-pc-windows-gnu-gfx906" },
  { entry: "hip-x86_64-w64-windows-msvc-gfx906", request: "hip-x86_64-pc-windows-msvc-gfx906" },
  { entry: "hip-x86_64-apple-macosx-foo-gfx906", request: "hip-x86_64-apple-macosx-elf-gfx906" },
  { entry: "hip-armv7-unknown-linux-gnueabi-gfx906", request: "hip-thumbv7-unknown-linux-gnueabi-gfx906" },
  { entry: "hip-armv7-unknown-linux-gnueabi-gfx906", request: "hip-thumbv7s-unknown-linux-gnueabi-gfx906" },
  { entry: "hip-armv6m-unknown-linux-gnueabi-gfx906", request: "hip-thumbv6m-unknown-linux-gnueabi-gfx906" },
  { entry: "hip-armv9.6a-unknown-linux-gnu-gfx906", request: "hip-arm-unknown-linux-gnu-gfx906" },
  { entry: "hip-amd64-unknown-linux-gnu-gfx906", request: "hip-x86_64-unknown-linux-gnu-gfx906" },
  { entry: "hip-x86_64-unknown-linux-muslf32-gfx906", request: "hip-x86_64-unknown-linux-musl-gfx906" },
  { entry: "hip-x86_64-unknown-linux-gnut64-gfx906", request: "hip-x86_64-unknown-linux-gnu-gfx906" },
  { entry: "hip-x86_64-intel-linux-gnu-gfx906", request: "hip-x86_64-unknown-linux-gnu-gfx906" },
  { entry: "hip-x86_64-unknown-nacl-gnu-gfx906", request: "hip-x86_64-unknown-zzz-gnu-gfx906" },
  { entry: "hip-x86_64-unknown-linux-llvm-gfx906", request: "hip-x86_64-unknown-linux-zzz-gfx906" },
  { entry: "hip-nvptx64-nvidia-cuda--sm_70", request: "hip-nvptx64-nvidia-cuda--sm_80" },
  { entry: "hip-nvptx64-nvidia-cuda--sm_70", request: "hipv4-nvptx64-nvidia-cuda--sm_70" },
  { entry: "hip-nvptx64-nvidia-cuda--sm_70:xnack+", request: "hipv4-nvptx64-nvidia-cuda--sm_70:xnack+" },
];

/** LLVM 14 archive matching (spec/bundler.md §8): kinds equal, triples compatible, GPU text equal. */
const ARCHIVE_CASES_14: readonly CompatCase[] = [
  { entry: `hip-${AMDHSA}-gfx908`, request: `hip-${AMDHSA}-gfx908:xnack+` },
  { entry: `hip-${AMDHSA}-gfx908`, request: "hip-amdgcn-amd-amdhsa-gfx908" },
  { entry: `hip-${AMDHSA}-gfx908`, request: `hipv4-${AMDHSA}-gfx908` },
  { entry: `hip-${AMDHSA}-gfx906:xnack+`, request: `hip-${AMDHSA}-gfx906` },
  { entry: `hip-${AMDHSA}-gfx906:xnack+`, request: "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+" },
];

/**
 * Target IDs for clang's `-mcpu`, which runs the full `parseTargetID` (aliases, per-processor features). A sample:
 * the whole table (every name and alias, with no feature, xnack+ and sramecc-) was checked the same way once,
 * 657 cases over clang-14/19/22, all agreeing.
 */
const CLANG_MCPU_SAMPLE: readonly string[] = [
  "tahiti", "carrizo:xnack+", "stoney:sramecc+", "polaris10:xnack-", "gfx940:xnack+", "gfx9-4-generic:sramecc+",
  "gfx1030:xnack+", "gfx906:sramecc+:xnack-", "gfx9-generic:xnack+", "gfx1036",
];

// ---------------------------------------------------------------------------------------------------------------

describe.each(VERSIONS)("clang-offload-bundler-%i", (version) => {
  describe.skipIf(!available[version])("native", () => {
    it.skipIf(version === 14)("keeps a target ID exactly for the known offload-arch names", async () => {
      const targets = [
        ...ARCH_CANDIDATES.map((name) => `hip-amdgcn-amd-amdhsa--${name}`),
        ...ARCH_CANDIDATES.filter((name) => name.startsWith("sm_")).map((name) => `openmp-nvptx64-nvidia-cuda--${name}`),
        HOST,
      ];
      const ids = await storedIds(version, targets);
      expect(ids).toEqual(targets.map((target) => normaliseBundleId(target, version)));
    });

    it("stores the normalised ID of each target", async () => {
      const groups = version === 14 ? VALID_TARGET_GROUPS : [...VALID_TARGET_GROUPS, ...VALID_TARGET_GROUPS_SINCE_19];
      const results = await Promise.all(groups.map((group) => storedIds(version, group)));
      groups.forEach((group, index) => {
        expect(results[index]).toEqual(group.map((target) => normaliseBundleId(target, version)));
      });
    });

    it("rejects invalid targets with the same message and exit code", async () => {
      const payload = writeTemp("x");
      const results = await Promise.all(INVALID_TARGETS.map((target) =>
        run(binary(version), ["-type=bc", `-targets=${target}`, ...ioArgs(version, [payload], [tempPath(".bc")])])));
      INVALID_TARGETS.forEach((target, index) => {
        const info = parseOffloadTarget(target, version);
        let expected: string | undefined;
        if (version === 22 && !checkOffloadBundleId(target)) expected = TARGET_FORMAT_MESSAGE;
        else expected = formatInvalidTargetMessage(target, info);
        const result = results[index]!;
        if (expected === undefined) {
          // Valid for this version: only the host-count rule can still fail it.
          expect(errorMessage(result) ?? "", target).not.toMatch(/^invalid target|^Targets need/);
        } else {
          expect({ target, code: result.code, message: errorMessage(result) }).toEqual({ target, code: 1, message: expected });
        }
      });
    });

    it.skipIf(version === 14)("reports the same conflicting target IDs", async () => {
      // One set per run. Sets with a malformed ID are left out: there LLVM dereferences an empty optional, so the
      // verdict (or a crash) depends on stack contents that differ between builds and environments.
      const sets = [
        ...CONFLICT_SETS.map((ids) => ids.map((id) => `hip-amdgcn-amd-amdhsa--${id}`)),
        ...CONFLICT_TARGET_SETS,
      ].filter((targets) => targets.every((target) => !hasMalformedTargetId(target, version)));
      expect(sets.length).toBeGreaterThanOrEqual(15);
      const payload = writeTemp("x");
      const results = await Promise.all(sets.map((targets) =>
        run(binary(version), ["-type=i", `-targets=${targets.join(",")}`,
          ...ioArgs(version, targets.map(() => payload), [tempPath(".i")])])));
      sets.forEach((targets, index) => {
        const result = results[index]!;
        const observed = result.code === 0 ? undefined : errorMessage(result);
        expect({ targets, observed }).toEqual({ targets, observed: predictTargetsError(targets, version) });
      });
    });

    it.skipIf(version === 14)("hands a bundle entry to the same requested targets when unbundling", async () => {
      // One single-entry bundle per distinct entry; its payload names the entry.
      const bundles = new Map<string, Promise<string>>();
      const bundleFor = (entry: string) => {
        let bundle = bundles.get(entry);
        if (bundle === undefined) {
          bundle = (async () => {
            const path = tempPath(".bc");
            const targets = needsHost([entry]) ? [entry, HOST] : [entry];
            const inputs = targets.map((target) => writeTemp(target === HOST ? "HOST" : `PAYLOAD ${entry}`));
            const bundled = await run(binary(version), ["-type=bc", `-targets=${targets.join(",")}`, ...ioArgs(version, inputs, [path])]);
            expect(bundled.code, bundled.stderr).toBe(0);
            return path;
          })();
          bundles.set(entry, bundle);
        }
        return bundle;
      };
      // Cases naming a malformed ID are left out: bundling or unbundling runs the conflict check over it, which
      // reads an empty optional (a crash on 19.1.7-3~deb12u1 and 22.1.8-1~deb12u1, a verdict on other builds).
      const cases = COMPAT_CASES.filter((testCase) =>
        !hasMalformedTargetId(testCase.entry, version) && !hasMalformedTargetId(testCase.request, version));
      expect(cases.length).toBeGreaterThan(30);
      const results = await Promise.all(cases.map(async (testCase) => {
        const payload = `PAYLOAD ${testCase.entry}`;
        const bundle = await bundleFor(testCase.entry);
        const output = tempPath(".out");
        const flags = testCase.hipOpenmpCompatible === true ? ["-hip-openmp-compatible"] : [];
        const unbundled = await run(binary(version), ["-type=bc", "-unbundle", "-allow-missing-bundles", ...flags,
          `-targets=${testCase.request}`, ...ioArgs(version, [bundle], [output])]);
        expect(unbundled.code, unbundled.stderr).toBe(0);
        return existsSync(output) && readFileSync(output, "utf8") === payload;
      }));
      cases.forEach((testCase, index) => {
        const entry = parseOffloadTarget(normaliseBundleId(testCase.entry, version), version);
        const request = parseOffloadTarget(normaliseBundleId(testCase.request, version), version);
        const expected = isCodeObjectCompatible(entry, request, { hipOpenmpCompatible: testCase.hipOpenmpCompatible ?? false });
        expect({ ...testCase, compatible: results[index] }).toEqual({ ...testCase, compatible: expected });
      });
    });

    it.skipIf(version !== 14 || !hasAr)("matches archive members by exact kind and GPU text", async () => {
      const results = await Promise.all(ARCHIVE_CASES_14.map(async (testCase, index) => {
        const member = tempPath(".bc");
        const bundled = await run(binary(14), ["-type=bc", `-targets=${testCase.entry}`, `-inputs=${writeTemp(`P${index}`)}`, `-outputs=${member}`]);
        expect(bundled.code, bundled.stderr).toBe(0);
        const archive = tempPath(".a");
        expect((await run("ar", ["rc", archive, member])).code).toBe(0);
        const output = tempPath(".a");
        await run(binary(14), ["-type=a", "-unbundle", "-allow-missing-bundles", `-targets=${testCase.request}`,
          `-inputs=${archive}`, `-outputs=${output}`]);
        return existsSync(output) && readFileSync(output, "latin1").includes(`P${index}`);
      }));
      ARCHIVE_CASES_14.forEach((testCase, index) => {
        const expected = isCodeObjectCompatible(parseOffloadTarget(testCase.entry, 14), parseOffloadTarget(testCase.request, 14));
        expect({ ...testCase, compatible: results[index] }).toEqual({ ...testCase, compatible: expected });
      });
    });

    it.skipIf(!onPath(`clang-${version}`))("clang -mcpu accepts the same target IDs as parseTargetId", async () => {
      const results = await Promise.all(CLANG_MCPU_SAMPLE.map((id) => run(`clang-${version}`,
        ["--target=amdgcn-amd-amdhsa", `-mcpu=${id}`, "-nogpulib", "-E", "-x", "c", "/dev/null", "-o", "/dev/null"])));
      CLANG_MCPU_SAMPLE.forEach((id, index) => {
        const result = results[index]!;
        const parsed = parseTargetId("amdgcn-amd-amdhsa", id, version);
        expect({ id, accepted: result.code === 0 }).toEqual({ id, accepted: parsed.ok });
        if (!parsed.ok) expect(errorMessage(result)).toBe(formatClangInvalidTargetIdMessage(id));
      });
    });

    it.skipIf(version === 14).each(["xnack", "sramecc"])("agrees on which processors allow %s", async (feature) => {
      const processors = [...OFFLOAD_ARCH_NAMES[version]].filter((name) => name.startsWith("gfx"));
      const entries = processors.map((name) => `hip-amdgcn-amd-amdhsa--${name}:${feature}+`);
      const requests = processors.map((name) => `hipv4-amdgcn-amd-amdhsa--${name}:${feature}+`);
      const bundle = tempPath(".bc");
      const bundled = await run(binary(version), ["-type=bc", `-targets=${entries.join(",")}`,
        ...ioArgs(version, processors.map((name) => writeTemp(name)), [bundle])]);
      expect(bundled.code, bundled.stderr).toBe(0);
      const outputs = processors.map(() => tempPath(".out"));
      const unbundled = await run(binary(version), ["-type=bc", "-unbundle", "-allow-missing-bundles",
        `-targets=${requests.join(",")}`, ...ioArgs(version, [bundle], outputs)]);
      expect(unbundled.code, unbundled.stderr).toBe(0);
      const observed = processors.filter((name, index) => existsSync(outputs[index]!) && readFileSync(outputs[index]!, "utf8") === name);
      const expected = processors.filter((name, index) =>
        isCodeObjectCompatible(parseOffloadTarget(bundleIdString(parseOffloadTarget(entries[index]!, version)), version),
          parseOffloadTarget(normaliseBundleId(requests[index]!, version), version)));
      expect(observed).toEqual(expected);
      // The table itself says the same for the names the bundler keeps whole.
      const fromTable = processors.filter((name) => {
        const resolved = resolveAmdgcnProcessor(name, version);
        return resolved !== undefined && resolved.features[feature as "xnack" | "sramecc"];
      });
      expect(observed.filter((name) => version === 22 || !name.includes("-"))).toEqual(
        fromTable.filter((name) => version === 22 || !name.includes("-")));
    });
  });
});
