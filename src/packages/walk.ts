/**
 * The package walker: what is inside a package, found by content (never by file name), nested to a
 * bounded depth, each member handed on as a `ByteSource` for the locator (src/inspect/locate.ts).
 *
 * | container | detected by | members |
 * |---|---|---|
 * | zip, wheel, `.conda` | `PK\3\4` (or an empty zip's `PK\5\6`) | central directory (src/packages/zip.ts) |
 * | Debian `.deb` | `!<arch>\n` whose first member is `debian-binary` | `data.tar.*`'s entries (`control.tar.*` skipped) |
 * | RPM | lead `ED AB EE DB` | the cpio payload's entries (src/packages/rpm.ts, cpio.ts) |
 * | tar (ustar, GNU, pax, v7) | header checksum at 0 | entries (src/packages/tar.ts) |
 * | docker save / OCI layout | a tar holding `manifest.json` or `index.json` + `oci-layout` | the layers' union (src/packages/image.ts) |
 * | gzip, xz, zstd, bzip2 | magic | the decoded stream, detected again (a `.tar.xz`, a `.so.gz`) |
 *
 * A plain static archive (`.a`) is not opened here: the locator walks archives itself.
 *
 * One pass: a package is read front to back and each member decoded once. A member needed at random
 * (anything the locator reads, or a zip/RPM/image that needs its end or index) is sliced out of the
 * package when the package is itself random-access and uncompressed, and otherwise spooled (the platform's
 * `Spooler`: memory when small, a temporary file when large). Members are named by their path inside,
 * one level per container; compression adds no level.
 *
 * Errors never stop the walk of other members: a member or container that cannot be read becomes a
 * problem naming its path and the offset (in the stream of the container that holds it), and the walk goes
 * on with its siblings. Only a failing read of the input itself, or an error thrown by `onMember`, escapes.
 *
 * Every decoded byte counts against the package's decompression budget (src/packages/budget.ts); where it
 * runs out the walk stops with one problem naming the member being read, after the members already handed on.
 */
import { OffloadKitError, isOffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { readExact, sliceSource } from "../engine/source.js";
import { ChunkReader, skipBytes, sourceChunks, truncated } from "./chunks.js";
import { isCpio, walkCpio } from "./cpio.js";
import { DecompressionBudget, DecompressionBudgetError, defaultDecompressionLimit } from "./budget.js";
import { compressionOf, tooLarge } from "./decoders.js";
import type { Compression, Decoders, Spooler } from "./decoders.js";
import { LayerStack, dockerManifests, layerPath, ociManifests } from "./image.js";
import type { ImageManifest } from "./image.js";
import { isRpm, readRpm } from "./rpm.js";
import { TAR_BLOCK, isTarHeader, walkTar } from "./tar.js";
import type { TarEntry } from "./tar.js";
import { DEFLATE_MAX_RATIO, isZip, readZip, zipDataOffset } from "./zip.js";
import type { ZipMember } from "./zip.js";
import { readXzLayout, xzStreamFrom } from "./xz-index.js";

export type PackageFormat = "zip" | "deb" | "rpm" | "tar" | "cpio" | "image" | Compression;

/** How deep containers nest before the walker stops opening them (compression counts as a level). */
export const MAX_PACKAGE_DEPTH = 8;
/** The declared size beyond which a zip member's ratio to its stored size must be plausible. */
const BOMB_FLOOR = 64 * 1024 * 1024;
/** Largest JSON (image manifests, indexes) read into memory. */
const MAX_JSON = 16 * 1024 * 1024;

export interface PackageMember {
  /** The package's name, then the member's path at each level: `["x.whl", "torch/lib/libtorch_hip.so"]`. */
  readonly path: readonly string[];
  readonly source: ByteSource;
}

export interface PackageProblem {
  readonly path: readonly string[];
  readonly code: string;
  readonly message: string;
  /** Offset in the stream of the container holding `path` (the decoded stream, for a compressed one). */
  readonly offset: number;
}

export interface PackageWalk {
  readonly format: PackageFormat;
  /** Regular files handed to `onMember`, symbolic and hard links seen (never followed), containers opened. */
  members: number;
  links: number;
  containers: number;
  /** Bytes of members spooled to temporary files, and the largest one. */
  spooledToDisk: number;
  largestSpooled: number;
  /** Members located as they streamed past, never kept (`WalkOptions.streamMembers`). */
  streamed: number;
}

/**
 * What reads a member as it streams past instead of keeping it (src/inspect/stream-locate.ts for
 * `ls`, `sizes` and `check`): the walker hands it the member's bytes in order, then `onMember` gets the
 * capture's `finish()` as the member's source. When `onMember` fails with an error `missed` recognises
 * (it needed a byte that was not kept), the member is decoded again (from the xz block holding its
 * start when the stream is an xz file with an index, as dpkg-deb writes, not counted against the budget
 * again; else from the start of its stream, counted), spooled and handed to `onMember`
 * once more, so `onMember` must not act before its reads are done.
 */
export interface MemberStreaming {
  /** Members smaller than this are spooled (in memory, cheaply) as before. */
  readonly minSize: number;
  /** A capture for a member whose first bytes are `head` (up to 1024), or undefined to spool it. */
  start(head: Uint8Array, size: number): { push(chunk: Uint8Array): void; finish(): ByteSource } | undefined;
  missed(e: unknown): boolean;
}

export interface WalkOptions {
  readonly decoders: Decoders;
  readonly spooler: Spooler;
  readonly maxDepth?: number;
  /** Total decoded bytes allowed for the package, every level counted (default: src/packages/budget.ts's rule). */
  readonly maxDecompressed?: number;
  /** Each regular member that is not itself a container (and each container past the depth limit). */
  readonly onMember: (member: PackageMember) => void | Promise<void>;
  readonly onProblem?: (problem: PackageProblem) => void;
  /** Members of a stream read as they go by, when the caller needs no random access to them. */
  readonly streamMembers?: MemberStreaming;
}

/** `a.whl!torch/lib/x.so`: the levels joined with `!`. */
export function memberDisplayPath(path: readonly string[]): string {
  return path.join("!");
}

/** A Debian package: an ar archive whose first member is `debian-binary` (dpkg's rule). */
function isDeb(head: Uint8Array): boolean {
  if (head.length < 8 + 16) return false;
  const magic = String.fromCharCode(...head.subarray(0, 8));
  const name = String.fromCharCode(...head.subarray(8, 24)).trimEnd();
  return magic === "!<arch>\n" && (name === "debian-binary" || name === "debian-binary/");
}

/** What a container starts with, if it is one (`head`: at least its first 512 bytes when it has them). */
export function sniffPackage(head: Uint8Array): PackageFormat | undefined {
  if (isZip(head)) return "zip";
  if (isDeb(head)) return "deb";
  if (isRpm(head)) return "rpm";
  const compression = compressionOf(head);
  if (compression !== undefined) return compression;
  if (isTarHeader(head)) return "tar";
  if (isCpio(head)) return "cpio";
  return undefined;
}

/**
 * Whether a member whose first bytes are `head` may be a package the writers take (every kind the walker opens
 * but cpio, which none writes): asked before the locator, as an uncompressed package holds its members' code
 * where the locator would see it (src/packages/node/editors.ts, src/browser/prune-package/index.ts).
 */
export function mayBeWritablePackage(head: Uint8Array): boolean {
  const format = sniffPackage(head);
  return format !== undefined && format !== "cpio";
}

/** Whether a tar's first entry looks like an image layout's (so a streamed tar is kept for random access). */
function looksLikeImage(firstName: string): boolean {
  const name = layerPath(firstName);
  return name === "oci-layout" || name === "index.json" || name === "manifest.json" || name === "blobs" || name.startsWith("blobs/") || /^[0-9a-f]{64}(\/|\.json$|$)/.test(name);
}

/** Members whose local header lies inside an earlier member's header or data (by offset order). */
function overlaps(members: readonly ZipMember[]): Set<ZipMember> {
  const out = new Set<ZipMember>();
  const sorted = [...members].sort((a, b) => a.localOffset - b.localOffset);
  let end = 0;
  for (const m of sorted) {
    if (m.localOffset < end) out.add(m);
    // The local header is at least 30 bytes plus the name; the data follows it.
    end = Math.max(end, m.localOffset + 30 + m.compressedSize);
  }
  return out;
}

/** Yields `head`, then the rest of `rest`. */
async function* prepend(head: Uint8Array, rest: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (head.length > 0) yield head;
  yield* rest;
}

/** An error thrown by `onMember`: carried through the walker's catches untouched, rethrown by walkPackage. */
class CallerError {
  constructor(readonly error: unknown) {}
}

function withOffset(e: unknown, path: readonly string[], fallbackOffset: number): PackageProblem {
  // A spent budget ends the whole walk (walkPackage reports it once), like the caller's own errors.
  if (e instanceof CallerError || e instanceof DecompressionBudgetError) throw e;
  if (isOffloadKitError(e)) return { path, code: e.code, message: e.message, offset: e.offset ?? fallbackOffset };
  throw e;
}

class Walker {
  readonly summary: PackageWalk;
  private readonly maxDepth: number;
  readonly budget: DecompressionBudget;
  /** The member (or container) most recently started: what a decoder is working for when the budget runs out. */
  private current: readonly string[] = [];

  constructor(private readonly options: WalkOptions, format: PackageFormat, packageSize: number) {
    this.maxDepth = options.maxDepth ?? MAX_PACKAGE_DEPTH;
    this.summary = { format, members: 0, links: 0, containers: 0, spooledToDisk: 0, largestSpooled: 0, streamed: 0 };
    const limit = options.maxDecompressed ?? defaultDecompressionLimit(packageSize);
    const rule = options.maxDecompressed !== undefined ? "as set" : `the larger of 2 GiB and 100x the ${packageSize}-byte package`;
    this.budget = new DecompressionBudget(limit, rule);
  }

  private decode(method: Compression, input: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    return this.budget.count(this.options.decoders.decode(method, input), () => this.current);
  }

  /**
   * `source` decoded again from its byte `from` on, for a member read a second time. From the xz block
   * holding `from` when the file has an index (`xzStreamFrom`): not counted against the budget, as the
   * first pass decoded and counted these bytes and the caller reads no further than the member (at most
   * one block more). Otherwise from the stream's start, counted: many misses in one gzip or zstd stream
   * would otherwise decode it again and again with nothing to stop them.
   */
  private decodeAgain(method: Compression, source: ByteSource, from: number): AsyncIterable<Uint8Array> {
    const seek = method === "xz" ? xzStreamFrom(source, from, this.xzLayout(source)) : undefined;
    if (seek !== undefined) return skipBytes(this.options.decoders.decode(method, seek.chunks), seek.skip);
    return skipBytes(this.decode(method, sourceChunks(source)), from);
  }

  /** Each xz file's index, read once (a package whose members miss reads again many times). */
  private readonly layouts = new WeakMap<ByteSource, ReturnType<typeof readXzLayout>>();

  private xzLayout(source: ByteSource): ReturnType<typeof readXzLayout> {
    if (!this.layouts.has(source)) this.layouts.set(source, readXzLayout(source));
    return this.layouts.get(source);
  }

  private inflateRaw(input: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    return this.budget.count(this.options.decoders.inflateRaw(input), () => this.current);
  }

  problem(path: readonly string[], e: unknown, offset: number): void {
    this.options.onProblem?.(withOffset(e, path, offset));
  }

  /** A member held at random access: a container to open, or a leaf for the caller. */
  async walkSource(source: ByteSource, path: readonly string[], depth: number): Promise<void> {
    if (this.budget.failure !== undefined) throw this.budget.failure;
    this.current = path;
    const head = readExact(source, 0, Math.min(source.size, 1024));
    const format = sniffPackage(head);
    if (format === undefined || depth >= this.maxDepth) {
      if (format !== undefined) {
        this.problem(path, new OffloadKitError("PACKAGE_TOO_DEEP", `${format} container nested more than ${this.maxDepth} deep; not opened`), 0);
      }
      this.summary.members++;
      try {
        await this.options.onMember({ path, source });
      } catch (e) {
        throw new CallerError(e);
      }
      return;
    }
    this.summary.containers++;
    try {
      switch (format) {
        case "zip": return await this.walkZip(source, path, depth);
        case "deb": return await this.walkDeb(source, path, depth);
        case "rpm": return await this.walkRpm(source, path, depth);
        case "tar": return await this.walkTarSource(source, path, depth);
        case "cpio": return await this.walkEntries(walkCpio, ChunkReader.ofSource(source), path, depth);
        case "image": return;
        default: {
          return await this.walkStream(this.decode(format, sourceChunks(source)), (from) => this.decodeAgain(format, source, from), path, depth + 1, format);
        }
      }
    } catch (e) {
      this.problem(path, e, 0);
    }
  }

  /** A decoded stream: a tar is walked as it comes; anything else is spooled and walked at random. */
  /** `reopen(from)` yields `stream` again from its byte `from` (decoding again, uncounted), for members that must be read back. */
  async walkStream(stream: AsyncIterable<Uint8Array>, reopen: (from: number) => AsyncIterable<Uint8Array>, path: readonly string[], depth: number, method: Compression): Promise<void> {
    const reader = ChunkReader.ofStream(stream);
    try {
      const head = await reader.read(TAR_BLOCK);
      const format = sniffPackage(head);
      if (format === "tar" && depth < this.maxDepth) {
        const name = new TextDecoder().decode(head.subarray(0, 100)).replace(/\0.*$/s, "");
        if (!looksLikeImage(name)) {
          this.summary.containers++;
          return await this.walkEntries(walkTar, ChunkReader.ofStream(prepend(head, this.rest(reader)), reopen), path, depth);
        }
      }
      if (format !== undefined && format !== "tar" && compressionOf(head) !== undefined && depth < this.maxDepth) {
        this.summary.containers++;
        const inner = format as Compression;
        return await this.walkStream(
          this.decode(inner, prepend(head, this.rest(reader))), (from) => skipBytes(this.options.decoders.decode(inner, reopen(0)), from), path, depth + 1, inner,
        );
      }
      const spooled = await this.spool(prepend(head, this.rest(reader)), undefined, path, method);
      try {
        await this.walkSource(spooled.source, path, depth);
      } finally {
        spooled.close();
      }
    } finally {
      await reader.close();
    }
  }

  private async *rest(reader: ChunkReader): AsyncGenerator<Uint8Array> {
    yield* reader.take(Number.MAX_SAFE_INTEGER);
  }

  private async spool(chunks: AsyncIterable<Uint8Array>, size: number | undefined, path: readonly string[], what: string) {
    const spooled = await this.options.spooler.spool(chunks, size, `${memberDisplayPath(path)} (${what})`);
    if (spooled.where === "file") {
      this.summary.spooledToDisk += spooled.source.size;
      this.summary.largestSpooled = Math.max(this.summary.largestSpooled, spooled.source.size);
    }
    return spooled;
  }

  /** One regular member of a tar or cpio stream: sliced when the stream is a source, spooled otherwise. */
  private async member(reader: ChunkReader, entry: TarEntry, path: readonly string[], depth: number): Promise<void> {
    const slice = reader.sourceAt(entry.size);
    if (slice !== undefined) {
      await this.walkSource(slice, path, depth);
      return;
    }
    if (reader.remaining() !== undefined) {
      throw truncated(`member '${entry.name}'`, entry.dataOffset, entry.size, reader.remaining()!);
    }
    const streaming = this.options.streamMembers;
    if (streaming !== undefined && reader.reopen !== undefined && entry.size >= streaming.minSize) {
      return this.streamTarMember(streaming, reader, entry, path, depth);
    }
    const spooled = await this.spool(reader.take(entry.size), entry.size, path, "member");
    try {
      if (spooled.source.size < entry.size) throw truncated(`member '${entry.name}'`, entry.dataOffset, entry.size, spooled.source.size);
      await this.walkSource(spooled.source, path, depth);
    } finally {
      spooled.close();
    }
  }

  /**
   * A member located as it streams past (`WalkOptions.streamMembers`): a leaf that is not kept. A
   * container, or a member the capture does not take, is spooled as before, from the bytes read so far
   * and the rest (`spoolRest`). `checkSize` sees how many bytes came (at most `size`) and throws as the
   * spooled path would; `readAgain` reads the member once more, spooled, and hands it to `onMember`.
   */
  private async streamMember(
    streaming: MemberStreaming,
    reader: ChunkReader,
    size: number,
    path: readonly string[],
    spoolRest: (head: Uint8Array) => Promise<void>,
    checkSize: (got: number) => Promise<void>,
    readAgain: () => Promise<void>,
  ): Promise<void> {
    const head = await reader.read(Math.min(size, 1024));
    const capture = sniffPackage(head) === undefined ? streaming.start(head, size) : undefined;
    if (capture === undefined) return spoolRest(head);
    let got = head.length;
    capture.push(head);
    for await (const chunk of reader.take(size - head.length)) {
      capture.push(chunk);
      got += chunk.length;
    }
    await checkSize(got);
    this.summary.members++;
    try {
      await this.options.onMember({ path, source: capture.finish() });
      this.summary.streamed++;
      return;
    } catch (e) {
      if (!streaming.missed(e)) throw new CallerError(e);
    }
    await readAgain();
  }

  /** A regular tar or cpio member of a stream, located as it goes by (see streamMember). */
  private async streamTarMember(streaming: MemberStreaming, reader: ChunkReader, entry: TarEntry, path: readonly string[], depth: number): Promise<void> {
    const short = (got: number) => truncated(`member '${entry.name}'`, entry.dataOffset, entry.size, got);
    return this.streamMember(
      streaming, reader, entry.size, path,
      async (head) => {
        const spooled = await this.spool(prepend(head, reader.take(entry.size - head.length)), entry.size, path, "member");
        try {
          if (spooled.source.size < entry.size) throw short(spooled.source.size);
          await this.walkSource(spooled.source, path, depth);
        } finally {
          spooled.close();
        }
      },
      async (got) => {
        if (got < entry.size) throw short(got);
      },
      async () => {
        // It needed bytes that went by: decode the stream again from the member (from its xz block where
        // the stream has an index, else from the start), and keep it this time.
        const again = ChunkReader.ofStream(reader.reopen!(entry.dataOffset));
        try {
          const spooled = await this.spool(again.take(entry.size), entry.size, path, "member");
          try {
            if (spooled.source.size < entry.size) throw short(spooled.source.size);
            await this.leaf(path, spooled.source);
          } finally {
            spooled.close();
          }
        } finally {
          await again.close();
        }
      },
    );
  }

  /** `onMember` for a leaf already counted (a member read a second time). */
  private async leaf(path: readonly string[], source: ByteSource): Promise<void> {
    try {
      await this.options.onMember({ path, source });
    } catch (e) {
      throw new CallerError(e);
    }
  }

  /**
   * The entries of a tar or cpio stream. An entry that cannot be read is a problem and the walk goes
   * on; a stream that breaks (bad header, decoder error, early end) is a problem at the container, after
   * every member before it was reported.
   */
  async walkEntries(
    entries: (reader: ChunkReader) => AsyncGenerator<TarEntry>,
    reader: ChunkReader,
    path: readonly string[],
    depth: number,
    keep: (entry: TarEntry) => readonly string[] | undefined = (entry) => [...path, layerPath(entry.name)],
  ): Promise<void> {
    let at = 0;
    try {
      for await (const entry of entries(reader)) {
        at = entry.headerOffset;
        // Every entry is offered (an image's whiteouts are empty files, its links cover lower files).
        const memberPath = keep(entry);
        if (memberPath === undefined) continue;
        if (entry.type === "symlink" || entry.type === "hardlink") {
          this.summary.links++;
          continue;
        }
        if (entry.type !== "file" || entry.size === 0) continue;
        this.current = memberPath;
        try {
          await this.member(reader, entry, memberPath, depth + 1);
        } catch (e) {
          // The member's own walk reports its own problems; what reaches here is its bytes not arriving.
          this.problem(memberPath, e, entry.dataOffset);
          // A stream that failed, or a member cut short, is where the container ends: nothing after it can be read.
          if (reader.remaining() === undefined || (isOffloadKitError(e) && e.code === "PACKAGE_TRUNCATED")) return;
        }
      }
      // A decoder's verdict (xz's CRC, zstd's checksum) comes at the end of its stream, after the archive's
      // end blocks: the rest is read so that a corrupt stream is reported, not taken as good.
      if (reader.remaining() === undefined) {
        at = reader.position;
        await reader.skip(Number.MAX_SAFE_INTEGER);
      }
    } catch (e) {
      this.problem(path, e, at);
    } finally {
      await reader.close();
    }
  }

  async walkZip(source: ByteSource, path: readonly string[], depth: number): Promise<void> {
    const index = readZip(source);
    const overlapping = overlaps(index.members);
    for (const member of index.members) {
      if (member.name.endsWith("/")) continue;
      const memberPath = [...path, layerPath(member.name)];
      if (overlapping.has(member)) {
        // Members sharing their bytes are the "overlapping files" zip bomb (Fifield 2019); unzip 6.0 refuses them too.
        this.problem(memberPath, new OffloadKitError("ZIP_OVERLAP", `zip member '${member.name}' (local header at offset ${member.localOffset}) overlaps an earlier member's data`, { offset: member.localOffset }), member.localOffset);
        continue;
      }
      if ((member.mode & 0o170000) === 0o120000) {
        this.summary.links++;
        continue;
      }
      this.current = memberPath;
      try {
        await this.zipMember(source, member, memberPath, depth + 1);
      } catch (e) {
        this.problem(memberPath, e, member.localOffset);
      }
    }
  }

  private async zipMember(source: ByteSource, member: ZipMember, path: readonly string[], depth: number): Promise<void> {
    const bad = (code: string, message: string, field: string) =>
      new OffloadKitError(code, `zip member '${member.name}' (local header at offset ${member.localOffset}): ${message}`, { offset: member.localOffset, field });
    if ((member.flags & 1) !== 0) throw bad("ZIP_ENCRYPTED", "encrypted; not read", "flags");
    if (member.size === 0) return;
    const start = zipDataOffset(source, member);
    if (member.method === 0) {
      if (member.compressedSize !== member.size) throw bad("ZIP_BAD_SIZE", `stored with ${member.compressedSize} bytes but declares ${member.size}`, "compressed size");
      await this.walkSource(sliceSource(source, start, member.size), path, depth);
      return;
    }
    if (member.method !== 8) throw bad("ZIP_UNSUPPORTED_METHOD", `compression method ${member.method} is not read (only stored and deflate)`, "method");
    if (member.size > BOMB_FLOOR && member.size > member.compressedSize * DEFLATE_MAX_RATIO) {
      throw bad("ZIP_BOMB", `declares ${member.size} bytes from ${member.compressedSize} compressed, beyond deflate's ${DEFLATE_MAX_RATIO}:1`, "uncompressed size");
    }
    const inflate = () => this.inflateRaw(sourceChunks(source, start, member.compressedSize));
    const badSize = (got: number) => bad("ZIP_BAD_SIZE", `inflates to ${got} bytes, not the declared ${member.size}`, "uncompressed size");
    const spoolAll = async (chunks: AsyncIterable<Uint8Array>, walk: (source: ByteSource) => Promise<void>) => {
      const spooled = await this.spool(chunks, member.size, path, "deflate");
      try {
        if (spooled.source.size !== member.size) throw badSize(spooled.source.size);
        await walk(spooled.source);
      } finally {
        spooled.close();
      }
    };
    const streaming = this.options.streamMembers;
    if (streaming === undefined || member.size < streaming.minSize) return spoolAll(inflate(), (s) => this.walkSource(s, path, depth));
    const reader = ChunkReader.ofStream(inflate());
    try {
      await this.streamMember(
        streaming, reader, member.size, path,
        (head) => spoolAll(prepend(head, this.rest(reader)), (s) => this.walkSource(s, path, depth)),
        async (got) => {
          if (got < member.size) throw badSize(got);
          // More than declared is the spooler's error, as when spooled.
          if ((await reader.read(1)).length > 0) throw tooLarge(`${memberDisplayPath(path)} (deflate)`, member.size);
        },
        () => spoolAll(inflate(), (s) => this.leaf(path, s)),
      );
    } finally {
      await reader.close();
    }
  }

  async walkDeb(source: ByteSource, path: readonly string[], depth: number): Promise<void> {
    // dpkg's ar: 60-byte headers, names padded with spaces (GNU `/` allowed), sizes in decimal.
    let at = 8;
    let data = false;
    while (at + 60 <= source.size) {
      const header = readExact(source, at, 60);
      const text = String.fromCharCode(...header);
      const name = text.slice(0, 16).trimEnd().replace(/\/$/, "");
      const size = Number(text.slice(48, 58).trim());
      if (text.slice(58, 60) !== "`\n" || !Number.isSafeInteger(size) || text.slice(48, 58).trim() === "") {
        throw new OffloadKitError("DEB_MALFORMED", `malformed .deb: bad ar member header at offset ${at}`, { offset: at, field: "header" });
      }
      const start = at + 60;
      if (start + size > source.size) throw truncated(`.deb member '${name}'`, start, size, source.size - start);
      if (name.startsWith("data.tar")) {
        data = true;
        // The data member adds no level: its entries are the package's files.
        await this.walkSource(sliceSource(source, start, size), path, depth);
      }
      at = start + size + (size % 2);
    }
    if (!data) throw new OffloadKitError("DEB_MALFORMED", `malformed .deb: no data.tar member (read to offset ${at})`, { offset: at });
  }

  async walkRpm(source: ByteSource, path: readonly string[], depth: number): Promise<void> {
    const layout = readRpm(source);
    if (layout.format !== "cpio") throw new OffloadKitError("RPM_UNSUPPORTED", `RPM payload format '${layout.format}' is not read (only cpio)`, { offset: layout.payloadOffset });
    const payload = sliceSource(source, layout.payloadOffset, source.size - layout.payloadOffset);
    const head = readExact(payload, 0, Math.min(payload.size, 16));
    const compression = compressionOf(head);
    const reader = compression === undefined
      ? ChunkReader.ofSource(payload)
      : ChunkReader.ofStream(this.decode(compression, sourceChunks(payload)), (from) => this.decodeAgain(compression, payload, from));
    await this.walkEntries(walkCpio, reader, path, depth + (compression === undefined ? 0 : 1));
  }

  /** A tar held at random access: an image layout, or plain entries sliced out. */
  async walkTarSource(source: ByteSource, path: readonly string[], depth: number): Promise<void> {
    const index = new Map<string, TarEntry>();
    const reader = ChunkReader.ofSource(source);
    let image = false;
    let broken: unknown;
    try {
      for await (const entry of walkTar(reader)) {
        const name = layerPath(entry.name);
        index.set(name, entry);
        if (name === "manifest.json" || name === "index.json") image = true;
      }
    } catch (e) {
      broken = e;
    }
    if (image) {
      if (broken !== undefined) this.problem(path, broken, 0);
      return this.walkImage(source, index, path, depth);
    }
    await this.walkEntries(walkTar, ChunkReader.ofSource(source), path, depth);
  }

  private async walkImage(source: ByteSource, index: Map<string, TarEntry>, path: readonly string[], depth: number): Promise<void> {
    const resolve = (name: string, hops = 0): TarEntry => {
      const entry = index.get(layerPath(name));
      if (entry === undefined) throw new OffloadKitError("IMAGE_MISSING_BLOB", `image names '${name}', which the tarball does not hold`);
      if ((entry.type === "symlink" || entry.type === "hardlink") && hops < 8) {
        const dir = name.includes("/") && entry.type === "symlink" ? name.slice(0, name.lastIndexOf("/") + 1) : "";
        return resolve(entry.linkName.startsWith("/") ? entry.linkName : dir + entry.linkName, hops + 1);
      }
      return entry;
    };
    const bytesOf = (entry: TarEntry) => sliceSource(source, entry.dataOffset, entry.size);
    const json = (name: string): unknown => {
      const entry = resolve(name);
      if (entry.size > MAX_JSON) throw new OffloadKitError("IMAGE_BAD_MANIFEST", `'${name}' is ${entry.size} bytes, larger than a manifest`, { offset: entry.headerOffset });
      try {
        return JSON.parse(new TextDecoder().decode(readExact(bytesOf(entry), 0, entry.size)));
      } catch (e) {
        if (isOffloadKitError(e)) throw e;
        throw new OffloadKitError("IMAGE_BAD_MANIFEST", `'${name}' is not JSON: ${(e as Error).message}`, { offset: entry.dataOffset });
      }
    };
    const images: ImageManifest[] = index.has("manifest.json") ? dockerManifests(json("manifest.json")) : ociManifests(json("index.json"), json);
    for (const image of images) {
      const imagePath = images.length > 1 ? [...path, image.name] : path;
      const stack = new LayerStack();
      for (let layer = image.layers.length - 1; layer >= 0; layer--) {
        const layerName = image.layers[layer]!;
        let entry: TarEntry;
        try {
          entry = resolve(layerName);
        } catch (e) {
          this.problem([...imagePath, layerName], e, 0);
          continue;
        }
        const blob = bytesOf(entry);
        const head = readExact(blob, 0, Math.min(blob.size, 16));
        const compression = compressionOf(head);
        const reader = compression === undefined
          ? ChunkReader.ofSource(blob)
          : ChunkReader.ofStream(this.decode(compression, sourceChunks(blob)), (from) => this.decodeAgain(compression, blob, from));
        this.summary.containers++;
        await this.walkEntries(walkTar, reader, [...imagePath, layerName], depth + 1, (member) => {
          const visible = stack.offer(member.name, layer, member.headerOffset, member.type === "directory");
          return visible ? [...imagePath, layerPath(member.name)] : undefined;
        });
      }
      for (const w of stack.unused()) {
        this.problem([...imagePath, image.layers[w.layer]!], new OffloadKitError(
          "IMAGE_WHITEOUT_UNUSED",
          `whiteout of '${w.path}' (at offset ${w.offset} of layer ${w.layer}) hides nothing: no lower layer has it`,
          { offset: w.offset },
        ), w.offset);
      }
    }
  }
}

/**
 * Walks `source` if it is a package (returns undefined, calling nothing, if it is not). `name` is the
 * first level of every member path (usually the file name as given).
 */
export async function walkPackage(source: ByteSource, name: string, options: WalkOptions): Promise<PackageWalk | undefined> {
  const head = readExact(source, 0, Math.min(source.size, 1024));
  const format = sniffPackage(head);
  if (format === undefined) return undefined;
  const walker = new Walker(options, format, source.size);
  try {
    await walker.walkSource(source, [name], 0);
  } catch (e) {
    if (e instanceof CallerError) throw e.error;
    if (!(e instanceof DecompressionBudgetError)) throw e;
  }
  // Reported here, once, even when a catch on the way (an image's index scan) swallowed it.
  const spent = walker.budget.failure;
  if (spent !== undefined) options.onProblem?.({ path: spent.where, code: spent.code, message: spent.message, offset: spent.offset ?? 0 });
  return walker.summary;
}
