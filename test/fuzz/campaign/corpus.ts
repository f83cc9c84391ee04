/**
 * The corpus of every input that ever failed: test/fixtures/fuzz/<parser>/<kind>-<sha1>.bin (minimised)
 * with a .json beside it saying how it failed, and the case it came from. `npm test` replays all of them.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FailureKind } from "./check.js";

export const CORPUS_DIR = join(process.cwd(), "test/fixtures/fuzz");

export interface CorpusEntry {
  readonly parser: string;
  readonly file: string;
  readonly bytes: Uint8Array;
  readonly capacity: number;
  readonly chunked: boolean;
  readonly kind: FailureKind;
}

export interface SavedFailure {
  readonly parser: string;
  readonly kind: FailureKind;
  readonly detail: string;
  readonly seed: string;
  readonly index: number;
  readonly capacity: number;
  readonly chunked: boolean;
  readonly bytes: Uint8Array;
  readonly originalLength: number;
}

/** Saves a failing input; returns its path (the same input twice is one file). */
export function saveFailure(failure: SavedFailure, dir = CORPUS_DIR): string {
  const folder = join(dir, failure.parser);
  mkdirSync(folder, { recursive: true });
  const name = `${failure.kind}-${createHash("sha1").update(failure.bytes).digest("hex").slice(0, 12)}`;
  const path = join(folder, `${name}.bin`);
  if (!existsSync(path)) {
    writeFileSync(path, failure.bytes);
    const { bytes: _bytes, ...meta } = failure;
    writeFileSync(join(folder, `${name}.json`), `${JSON.stringify({ ...meta, length: failure.bytes.length }, null, 2)}\n`);
  }
  return path;
}

export function loadCorpus(dir = CORPUS_DIR): CorpusEntry[] {
  if (!existsSync(dir)) return [];
  const entries: CorpusEntry[] = [];
  for (const parser of readdirSync(dir, { withFileTypes: true })) {
    if (!parser.isDirectory()) continue;
    for (const file of readdirSync(join(dir, parser.name))) {
      if (!file.endsWith(".bin")) continue;
      const path = join(dir, parser.name, file);
      const meta = JSON.parse(readFileSync(path.replace(/\.bin$/, ".json"), "utf8")) as SavedFailure;
      entries.push({ parser: parser.name, file: path, bytes: new Uint8Array(readFileSync(path)), capacity: meta.capacity, chunked: meta.chunked, kind: meta.kind });
    }
  }
  return entries;
}
