/**
 * The inputs of `offload-kit check`: every bundle entry in a file (a bundle, a compressed bundle, a fat
 * object, a host executable with embedded bundles, an archive of any of these) or in the offload files
 * of a directory, each with the verdict of src/inspect/check.ts for one GPU configuration.
 *
 * Archive members are read as the bundler reads them (src/node/archive.ts: decompressed, fat objects
 * by section, anything else as a binary bundle); other files as `offload-kit ls` scans them, so a
 * bundle embedded in an executable counts too, and a fat object's `__CLANG_OFFLOAD_BUNDLE__` sections.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Engine } from "../engine/engine.js";
import { OffloadKitError, isOffloadKitError } from "../engine/errors.js";
import { createEngine, engine as defaultEngine } from "../engine/select.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { isArchive, readArchive } from "../formats/archive.js";
import { OBJECT_SNIFF_SIZE } from "../formats/object-file.js";
import { checkEntry } from "../inspect/check.js";
import type { EntryVerdict, GpuConfig } from "../inspect/check.js";
import { scanBundles } from "../inspect/scan.js";
import { archiveMemberSource, memberBundleEntries } from "./archive.js";
import { decompressMember, openDecompressed } from "./decompress.js";
import { withFile } from "./file-source.js";

export type InputKind = "archive" | "package" | "fat object" | "bundle" | "compressed bundle" | "text bundle" | "embedded bundles" | "none";

export interface CheckedEntry {
  /** Archive member name, for archives. */
  readonly member?: string;
  readonly id: string;
  readonly size: number;
  readonly verdict: EntryVerdict;
}

export interface CheckedInput {
  readonly path: string;
  readonly kind: InputKind;
  readonly entries: readonly CheckedEntry[];
  /** Entries that are device code (not host). */
  readonly deviceEntries: number;
  readonly loadable: number;
  /** Set when the input could not be read. */
  readonly error?: { readonly code: string; readonly message: string };
}

export interface CheckOptions {
  /** Only entries of this offload kind count (hip and hipv4 are one). */
  readonly kind?: string;
  readonly engine?: Engine;
}

const METADATA_WINDOW = 4 * 1024;

interface FoundEntry {
  readonly member?: string;
  readonly id: string;
  readonly size: number;
}

function entriesOfFile(path: string, source: ByteSource, engine: Engine, fallback: Engine): { kind: InputKind; entries: FoundEntry[] } {
  const head = readExact(source, 0, Math.min(source.size, OBJECT_SNIFF_SIZE));
  if (isArchive(head)) {
    const archive = readArchive(source, { engine });
    const entries: FoundEntry[] = [];
    for (const member of archive.members) {
      const input = openDecompressed(archiveMemberSource(source, path, member));
      try {
        for (const e of memberBundleEntries(input.source, engine, fallback).fileOrder) entries.push({ member: member.name, id: e.id, size: e.size });
      } finally {
        input.close();
      }
    }
    return { kind: "archive", entries };
  }
  const entries: FoundEntry[] = [];
  let kind: InputKind = "none";
  const report = scanBundles(source, fallback, { openCompressed: (input, member) => decompressMember(input, member) });
  if (report.bundles.length === 0 && report.problems.length > 0) {
    const problem = report.problems[0];
    throw new OffloadKitError(problem.code, problem.message, { offset: problem.offset });
  }
  for (const bundle of report.bundles) {
    if (kind === "none") {
      if (bundle.compressed !== undefined) kind = "compressed bundle";
      else if (bundle.format === "text") kind = "text bundle";
      else if (bundle.format === "object") kind = "fat object";
      else kind = bundle.offset === 0 ? "bundle" : "embedded bundles";
    }
    for (const e of bundle.entries) entries.push({ id: e.id, size: e.size });
  }
  return { kind, entries };
}

/** Checks one file. */
export function checkFile(path: string, gpu: GpuConfig, options: CheckOptions = {}): CheckedInput {
  const engine = options.engine ?? defaultEngine();
  try {
    return withFile(path, (source) => {
      const meta = createEngine(engine.kind, METADATA_WINDOW);
      const { kind, entries } = entriesOfFile(path, source, meta, engine);
      const checked = entries.map((e) => ({ ...e, verdict: checkEntry(e.id, gpu, { kind: options.kind }) }));
      return {
        path,
        kind,
        entries: checked,
        deviceEntries: checked.filter((e) => e.verdict.verdict !== "host").length,
        loadable: checked.filter((e) => e.verdict.verdict === "loadable").length,
      };
    });
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { path, kind: "none", entries: [], deviceEntries: 0, loadable: 0, error: { code: e.code, message: e.message } };
  }
}

/** The files below `dir` (sorted, depth first; symbolic links are not followed). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (stat.isDirectory()) out.push(...listFiles(path));
    else if (stat.isFile()) out.push(path);
  }
  return out;
}

export interface CheckRun {
  readonly inputs: readonly CheckedInput[];
  /** Files found in directories that hold no offload code (not counted as inputs). */
  readonly skipped: readonly string[];
  /** Directories given that held no offload file at all. */
  readonly emptyDirectories: readonly string[];
}

/** Checks files and directories: a file given by name is an input; in a directory, each offload file is. */
export function checkPaths(paths: readonly string[], gpu: GpuConfig, options: CheckOptions = {}): CheckRun {
  const inputs: CheckedInput[] = [];
  const skipped: string[] = [];
  const emptyDirectories: string[] = [];
  for (const path of paths) {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isDirectory()) {
      let found = 0;
      for (const file of listFiles(path)) {
        const checked = checkFile(file, gpu, options);
        // In a directory, only files that hold offload code are inputs (a host-only static library is not).
        if (checked.error === undefined && checked.entries.length === 0) skipped.push(file);
        else {
          inputs.push(checked);
          found++;
        }
      }
      if (found === 0) emptyDirectories.push(path);
    } else {
      inputs.push(checkFile(path, gpu, options));
    }
  }
  return { inputs, skipped, emptyDirectories };
}
