/**
 * A kpack'd host binary's device code found on disk: src/kpack/location.ts over the file system
 * (src/kpack/node/resolve.ts DISK), archive paths printed relative to the working directory when shorter; and
 * its code objects read back from their archives for extraction.
 */
import { relative } from "node:path";
import { bytesSource } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { readKpackEntry } from "../../formats/kpack.js";
import { withFile } from "../../node/file-source.js";
import type { LocatedBundle, Location } from "../../inspect/locate.js";
import type { ScanProblem } from "../../inspect/scan.js";
import * as core from "../location.js";
import type { KpackLocateOptions, KpackPlace } from "../location.js";
import type { KpackHost } from "../host.js";
import type { KpackResolution } from "../resolve.js";
import { DISK } from "./resolve.js";

export type { KpackLocateOptions } from "../location.js";

/** Paths as printed: relative to the working directory when that is shorter. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.length < path.length ? rel : path;
}

function onDisk(): KpackPlace {
  return { files: DISK, env: process.env, shown };
}

/** The host and what serves it, or undefined when `source` is not a kpack'd host binary (a problem when it is one we cannot read). */
export function resolveKpackHost(path: string, source: ByteSource, options: KpackLocateOptions = {}): { host: KpackHost; resolution: KpackResolution } | { problem: ScanProblem } | undefined {
  return core.resolveKpackHost(onDisk(), path, source, options);
}

/**
 * `location` with the kpack'd host's wrappers added as `kpack` bundles (and its misses as problems); the
 * location as it is for any other file. Only ELF files are looked at.
 */
export function withKpackHost(path: string, source: ByteSource, location: Location, options: KpackLocateOptions = {}): Location {
  return core.withKpackHost(onDisk(), path, source, location, options);
}

/**
 * For extraction: a `kpack` bundle of a host binary with its code objects read (zstd frames decoded) from their
 * archives and laid back to back, the entries' offsets positions there.
 */
export function kpackHostContents(bundle: LocatedBundle): { bundle: LocatedBundle; contents: ByteSource } {
  const decode = codecDecompressor();
  const pieces = bundle.entries.map((e) => {
    const info = e.kpack!;
    return withFile(info.archive!, (source) => {
      const stored = { key: info.key, arch: info.arch, originalSize: e.size, offset: info.storedOffset, size: info.storedSize };
      return readKpackEntry(source, info.compression, stored, (frame, size) => decode("zstd", frame, size));
    });
  });
  const contents = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  const entries = bundle.entries.map((e, i) => {
    contents.set(pieces[i]!, at);
    at += pieces[i]!.length;
    return { ...e, offset: at - pieces[i]!.length, size: pieces[i]!.length };
  });
  return { bundle: { ...bundle, entries }, contents: bytesSource(contents) };
}
