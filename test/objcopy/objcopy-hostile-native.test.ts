/**
 * src/objcopy against llvm-objcopy-19 on the fuzz campaign's ELF inputs (test/fuzz/campaign/targets/elf.ts:
 * written from scratch, then mutated: odd alignments, NOBITS sections, lying sizes and counts). Where
 * llvm-objcopy writes a file, ours must be the same bytes or a clear refusal (an OffloadKitError: we are stricter
 * about malformed headers, and refuse what we do not reproduce, such as program headers); where llvm-objcopy
 * refuses, ours must refuse too. Refusals of what llvm-objcopy writes are counted and must stay rare.
 *
 * OFFLOAD_KIT_OBJCOPY_HOSTILE sets the number of inputs (default 300).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isOffloadKitError } from "../../src/engine/errors.js";
import { addSections, removeSections } from "../../src/objcopy/index.js";
import { Rand } from "../fuzz/campaign/rand.js";
import { mutate } from "../fuzz/campaign/sample.js";
import { elfSample } from "../fuzz/campaign/targets/elf.js";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

const COUNT = Number(process.env.OFFLOAD_KIT_OBJCOPY_HOSTILE ?? 300);
const objcopy = nativeTool("llvm-objcopy-19");
const PREFIX = "__CLANG_OFFLOAD_BUNDLE__";
const dir = mkdtempSync(join(tmpdir(), "offload-kit-objcopy-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Outcome = { kind: "bytes"; bytes: Buffer } | { kind: "error"; code: string } | { kind: "huge"; size: number } | { kind: "timeout" };

/** Hostile alignments make llvm-objcopy write gigabytes of padding (3.9 GB seen): those are not read back. */
const HUGE = 64 * 1024 * 1024;

function native(args: string[], out: string): Outcome {
  rmSync(out, { force: true });
  const r = spawnSync(objcopy!, args, { timeout: HANG_MS });
  // Killed by the timeout (seen on a 300-byte input): no verdict to compare with.
  if (r.status === null) return { kind: "timeout" };
  if (r.status !== 0 || !existsSync(out)) return { kind: "error", code: `exit ${r.status}` };
  const size = statSync(out).size;
  if (size > HUGE) {
    rmSync(out, { force: true });
    return { kind: "huge", size };
  }
  return { kind: "bytes", bytes: readFileSync(out) };
}

function ours(run: () => Uint8Array): Outcome {
  try {
    return { kind: "bytes", bytes: Buffer.from(run()) };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { kind: "error", code: e.code };
  }
}

describe.skipIf(objcopy === undefined)("llvm-objcopy-19 on hostile ELF inputs", () => {
  it(`agrees on ${COUNT} generated and mutated objects`, { timeout: HANG_MS }, () => {
    const disagreements: string[] = [];
    let written = 0;
    let refusedByUs = 0;
    let nativeTimeouts = 0;
    const host = join(dir, "host.bin");
    writeFileSync(host, Uint8Array.of(0));
    for (let i = 0; i < COUNT; i++) {
      const r = new Rand(`objcopy-hostile-${i}`);
      const sample = elfSample(r);
      const input = i % 4 === 0 ? sample.bytes : mutate(r, sample, { other: () => elfSample(r) });
      const inPath = join(dir, "in.o");
      const devPath = join(dir, "dev.bin");
      const device = input.subarray(0, 32);
      writeFileSync(inPath, input);
      writeFileSync(devPath, device);
      const cases: [string, string[], () => Uint8Array][] = [
        ["add", [`--add-section=${PREFIX}h=${host}`, `--set-section-flags=${PREFIX}h=readonly,exclude`, `--add-section=${PREFIX}d=${devPath}`,
          `--set-section-flags=${PREFIX}d=readonly,exclude`, "--", inPath, join(dir, "out.o")],
        () => addSections(input, [{ name: `${PREFIX}h`, data: Uint8Array.of(0), flags: "readonly,exclude" }, { name: `${PREFIX}d`, data: device, flags: "readonly,exclude" }])],
        ["remove", ["--regex", `--remove-section=${PREFIX}.*`, "--", inPath, join(dir, "out.o")], () => removeSections(input, (n) => n.startsWith(PREFIX))],
      ];
      for (const [what, args, run] of cases) {
        const theirs = native(args, join(dir, "out.o"));
        const mine = ours(run);
        if (theirs.kind === "timeout") {
          nativeTimeouts++;
        } else if (theirs.kind === "huge") {
          // We refuse to allocate what only padding would fill.
          if (mine.kind !== "error" || mine.code !== "OBJCOPY_TOO_LARGE") disagreements.push(`${i} ${what}: llvm-objcopy wrote ${theirs.size} bytes, we did not refuse`);
        } else if (theirs.kind === "bytes" && mine.kind === "bytes") {
          written++;
          if (!theirs.bytes.equals(mine.bytes)) disagreements.push(`${i} ${what}: different bytes (${Buffer.from(input).toString("hex")})`);
        } else if (theirs.kind === "bytes" && mine.kind === "error") {
          // Stricter than llvm-objcopy is allowed (a clear error, never a wrong file); counted and bounded below.
          refusedByUs++;
        } else if (theirs.kind === "error" && mine.kind === "bytes") {
          disagreements.push(`${i} ${what}: we wrote what llvm-objcopy refused (${theirs.code}) (${Buffer.from(input).toString("hex")})`);
        }
      }
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
    // The generator must reach the writer, not only the error paths.
    expect(written).toBeGreaterThan(COUNT / 5);
    expect(refusedByUs).toBeLessThan(COUNT / 20);
    expect(nativeTimeouts).toBeLessThan(COUNT / 100 + 2);
  });
});
