/**
 * What ls, sizes, extract and check share for packages (src/packages/node/inputs.ts): the async guard, the
 * package summary line, and problems named by member path.
 */
import type { InputWalk } from "../../packages/node/inputs.js";
import type { CliIO } from "../io.js";
import { printError, printWarning, runGuarded } from "../io.js";
import { hex } from "./common.js";
import type { Warnings } from "./common.js";

/** `runGuarded` for a body that awaits (package walks do): the same messages and exit codes. */
export async function runGuardedAsync(io: CliIO, name: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    return runGuarded(io, name, () => {
      throw e;
    });
  }
}

/** `x.deb: deb package, 4 members, 1 link, 1 with offload code`. */
export function packageLine(path: string, walk: InputWalk, withCode: number): string {
  const p = walk.package!;
  const parts = [
    `${p.format} package`,
    `${p.members} member${p.members === 1 ? "" : "s"}`,
    ...(p.links > 0 ? [`${p.links} link${p.links === 1 ? "" : "s"} (not followed)`] : []),
    `${withCode} with offload code`,
    // Plain words for the walk's two ways of reading a large member (src/packages/walk.ts streamMember, spooling).
    ...(p.streamed > 0 ? [`${p.streamed} read in one pass as the package was unpacked (not stored)`] : []),
    ...(p.spooledToDisk > 0 ? [`largest member copied to a temporary file: ${p.largestSpooled} bytes`] : []),
  ];
  return `${path}: ${parts.join(", ")}\n`;
}

/** Problems that do not make the input fail: legal but odd (a whiteout hiding nothing), or a depth limit reached. */
const WARNINGS = new Set(["IMAGE_WHITEOUT_UNUSED", "PACKAGE_TOO_DEEP"]);

/**
 * Prints each problem as `x.deb!usr/lib/y.so: at 0x10: message` (an error, or a warning for the codes
 * above); returns whether any was an error.
 */
export function printProblems(io: CliIO, name: string, walk: InputWalk): boolean {
  let failed = false;
  for (const p of walk.problems) {
    const text = `${p.name}: at ${hex(p.offset)}: ${p.message}`;
    if (WARNINGS.has(p.code)) printWarning(io, name, text);
    else {
      printError(io, name, text);
      failed = true;
    }
  }
  return failed;
}

/** Keeps the problems printPackageProblems prints as warnings, for --json's `warnings`. */
export function recordPackageWarnings(warnings: Warnings, walk: InputWalk): void {
  for (const p of walk.problems) if (WARNINGS.has(p.code)) warnings.record(p.code, `at ${hex(p.offset)}: ${p.message}`, p.name);
}

export function hasErrors(walk: InputWalk): boolean {
  return walk.problems.some((p) => !WARNINGS.has(p.code));
}

/** The problems for --json: the member path as a list. */
export function problemsJson(walk: InputWalk): unknown[] {
  return walk.problems.map((p) => ({ path: p.name, member: p.path.slice(1), code: p.code, message: p.message, offset: p.offset }));
}
