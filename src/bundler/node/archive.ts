/**
 * `-type=a -unbundle` on files: heterogeneous device archive in, one device archive per target out,
 * byte-identical to clang-offload-bundler 19 (OffloadBundler::UnbundleArchive and the LLVM 19
 * archive writer; spec bundler.md §8). The rules live in src/bundler/archive.ts and
 * src/formats/archive.ts; this module reads and writes.
 *
 * Memory stays bounded by the largest member's metadata: member headers and bundle headers are read
 * through a small window, payloads are never held (symbol tables are computed from positioned reads,
 * then payloads are copied through the engine window straight into the outputs). Outputs are written
 * atomically after every archive has been planned, so a failure leaves no output behind (the native
 * tool leaves the archives of the targets before the failing one).
 *
 * Thin archives: each member is read from its file, `<archive directory>/<name>` (or the name when
 * it is absolute), as `Archive::Child::getBuffer` does; each read opens and closes it, so a thousand
 * members do not hold a thousand descriptors.
 *
 * Fat-object members (ELF objects with bundle sections) give their sections as entries; a host entry becomes the
 * member without its bundle sections (LLVM runs llvm-objcopy; src/objcopy makes the same bytes in memory).
 * Not followed (errors instead): members that are non-ELF object files.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { Engine } from "../../engine/engine.js";
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { createEngine, engine as defaultEngine } from "../../engine/select.js";
import { blockCachedSource, bytesSource, readExact, readInto, sliceSource } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { claimWindow } from "../../engine/window.js";
import { layoutArchive, readArchive } from "../../formats/archive.js";
import type { ArchiveLayout, ArchiveMember, NewArchiveMember, PackedSymbols } from "../../formats/archive.js";
import { distinctEntries, readBinaryBundle } from "../../formats/bundle.js";
import { archiveMemberSymbols, memberSymbolicKind } from "../../formats/symbols.js";
import type { MemberSymbols } from "../../formats/symbols.js";
import { checkArchiveMemberConflicts, planArchiveUnbundle } from "../archive.js";
import type { ArchiveBundleMember, DeviceArchiveMember } from "../archive.js";
import type { BundlerJob } from "../options.js";
import type { IndexedEntry } from "../read.js";
import { nativeVisitOrder } from "../read.js";
import { hostObject, isObjectHostEntry, objectBundleEntries } from "../object-bundle.js";
import { copyRange } from "../../node/copy.js";
import { openDecompressed } from "../../compress/node/decompress.js";
import type { DecompressOptions, DecompressedInput } from "../../compress/node/decompress.js";
import { fileError } from "../../node/errors.js";
import { FileSource, withFile } from "../../node/file-source.js";
import { withOutputs } from "../../node/output.js";

/**
 * Window of the engine that reads member and bundle headers: small, so a header costs one small read
 * (measured: 64 KiB windows read 128 MB to index a 172 MB archive of 1000 members, 4 KiB ones 8 MB).
 * A bundle ID longer than the window falls back to the main engine's window.
 */
const METADATA_WINDOW = 4 * 1024;
const NEWLINE = new Uint8Array([0x0a]);
/** Output archives are many small pieces (a 60-byte header, a payload, a padding byte): written 256 KiB at a time. */
const OUTPUT_BUFFER = 256 * 1024;

export interface ArchiveUnbundleHooks {
  /** Receives warnings as LLVM prints them (`warning: '<member>': <message>\n`). */
  readonly warn?: (text: string) => void;
  /** The environment (default process.env): LLVM's writer reads SYM64_THRESHOLD from it. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface DeviceArchiveOutput {
  readonly target: string;
  readonly path: string;
  readonly members: readonly string[];
  readonly size: number;
}

export interface ArchiveUnbundleResult {
  readonly inputSize: number;
  readonly archives: readonly DeviceArchiveOutput[];
}

/** One input member, opened (and decompressed) for reading. */
interface OpenMember extends ArchiveBundleMember {
  readonly source: ByteSource;
  /** Fat-object host entries (one 0x00 byte), by payload offset: LLVM replaces them with an objcopy result. */
  readonly objectHostEntries: ReadonlySet<number>;
}

/** SYM64_THRESHOLD as `getAsInteger(10)` reads it (anything else leaves the 4 GiB default). */
function sym64Threshold(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const text = env.SYM64_THRESHOLD;
  return text !== undefined && /^[0-9]+$/.test(text) ? Number(text) : undefined;
}

function decompressMember(source: ByteSource, options: DecompressOptions): DecompressedInput {
  try {
    return openDecompressed(source, options);
  } catch (e) {
    // The archive path words the same failure differently.
    if (isOffloadKitError(e) && e.message.startsWith("Failed to decompress input: ")) {
      throw new OffloadKitError(e.code, `Failed to decompress code object: ${e.message.slice("Failed to decompress input: ".length)}`, {
        offset: e.offset, field: e.field, cause: e,
      });
    }
    throw e;
  }
}

/**
 * The bundle entries of one member, as CreateFileHandler(-type=a) finds them: an object file that
 * LLVM can open has its entries in sections; anything else is read as a binary bundle (no magic, no
 * entries: the member is skipped). `entries` is the order the bundler visits them in, `fileOrder` the
 * order they are stored in.
 */
export function memberBundleEntries(
  source: ByteSource, engine: Engine, fallback?: Engine, ids?: Map<string, string>,
): { entries: IndexedEntry[]; fileOrder: IndexedEntry[]; object: boolean } {
  const objectEntries = objectBundleEntries(source);
  if (objectEntries !== undefined) return { entries: objectEntries, fileOrder: objectEntries, object: true };
  let read;
  try {
    read = readBinaryBundle(source, { engine });
  } catch (e) {
    if (!(isOffloadKitError(e) && e.code === "BUNDLE_ID_TOO_LONG" && fallback !== undefined)) throw e;
    read = readBinaryBundle(source, { engine: fallback });
  }
  if (read.kind === "none") return { entries: [], fileOrder: [], object: false };
  // `ids`: one string per distinct ID across the archive's members (they repeat), not one per member.
  const intern = (id: string) => {
    if (ids === undefined) return id;
    const known = ids.get(id);
    if (known !== undefined) return known;
    ids.set(id, id);
    return id;
  };
  const fileOrder = distinctEntries(read.bundle.entries).map(({ id, offset, size }) => ({ id: intern(id), offset, size }));
  return { entries: nativeVisitOrder(fileOrder), fileOrder, object: false };
}

/** `Archive::Child::getFullName`: a thin member's file, beside the archive (as the archive was named). */
export function thinMemberPath(archivePath: string, name: string): string {
  if (name.startsWith("/")) return name;
  const slash = archivePath.lastIndexOf("/");
  if (slash === -1) return name;
  const parent = slash === 0 ? "/" : archivePath.substring(0, slash);
  return parent.endsWith("/") ? parent + name : `${parent}/${name}`;
}

/**
 * A file read by reopening it for each read (thin archive members: no descriptor is held). A member that is
 * not a regular file (a FIFO) cannot be reopened and read again: it is read once into a temporary file
 * (src/node/spool.ts), removed when the run ends.
 */
class ReopeningFileSource implements ByteSource {
  readonly size: number;
  private spooled: FileSource | undefined;
  constructor(readonly path: string, private readonly displayName: string) {
    this.size = this.withFd((fd) => {
      const stat = fstatSync(fd);
      if (stat.isFile()) return stat.size;
      this.spooled = FileSource.fromStream(fd, displayName);
      return this.spooled.size;
    });
  }

  private withFd<T>(use: (fd: number) => T): T {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch (e) {
      throw fileError(this.displayName, e);
    }
    try {
      return use(fd);
    } finally {
      closeSync(fd);
    }
  }

  read(dest: Uint8Array, position: number): number {
    if (dest.length === 0) return 0;
    if (this.spooled !== undefined) return this.spooled.read(dest, position);
    return this.withFd((fd) => {
      try {
        return readSync(fd, dest, 0, dest.length, position);
      } catch (e) {
        throw fileError(this.displayName, e);
      }
    });
  }
}

/** A member's bytes: a slice of the archive, or a thin member's own file. */
export function archiveMemberSource(file: ByteSource, archivePath: string, member: ArchiveMember): ByteSource {
  if (!member.thin) return sliceSource(file, member.dataOffset, member.size);
  return new ReopeningFileSource(thinMemberPath(archivePath, member.name), member.name);
}

/** What is kept of each of the archive's members until the outputs are written: as little as possible. */
interface MemberContext {
  readonly opened: DecompressedInput[];
  readonly ids: Map<string, string>;
}

const NO_HOST_ENTRIES: ReadonlySet<number> = new Set();

function openMember(
  file: ByteSource, archivePath: string, member: ArchiveMember, engine: Engine, fallback: Engine, decompress: DecompressOptions,
  context: MemberContext,
): OpenMember {
  const raw = archiveMemberSource(file, archivePath, member);
  const input = decompressMember(raw, decompress);
  // Only decompressed members hold something to release.
  if (input.source !== raw) context.opened.push(input);
  const { entries, object } = memberBundleEntries(input.source, engine, fallback, context.ids);
  let objectHostEntries = NO_HOST_ENTRIES;
  if (object) {
    const hosts = new Set<number>();
    for (const entry of entries) if (isObjectHostEntry(input.source, entry)) hosts.add(entry.offset);
    objectHostEntries = hosts;
  }
  return { name: member.name, entries, source: input.source, objectHostEntries };
}

/** CheckHeterogeneousArchive: every member's bundle IDs (members not decompressed, as in LLVM 19). */
function checkInputArchive(file: ByteSource, path: string, engine: Engine, fallback: Engine): void {
  const archive = readArchive(file, { engine });
  for (const member of archive.members) {
    const { entries } = memberBundleEntries(archiveMemberSource(file, path, member), engine, fallback);
    const message = checkArchiveMemberConflicts(member.name, entries.map((e) => e.id), path);
    if (message !== undefined) throw new OffloadKitError("CONFLICTING_TARGET_IDS", message);
  }
}

/**
 * A payload to index: read whole into the engine window when it fits (one read instead of one per
 * page the bitcode walk touches), else read in place.
 */
function payloadForSymbols(engine: Engine, source: ByteSource, entry: IndexedEntry): ByteSource {
  if (entry.size > engine.windowCapacity) return sliceSource(source, entry.offset, entry.size);
  const window = claimWindow(engine).subarray(0, entry.size);
  readInto(source, window, entry.offset);
  return bytesSource(window);
}

interface StagedArchive {
  readonly target: number;
  readonly layout: ArchiveLayout;
  readonly members: readonly DeviceArchiveMember[];
}

/** `-type=a -unbundle` for a validated job. */
export function unbundleArchive(
  job: BundlerJob,
  engine: Engine = defaultEngine(),
  decompress: DecompressOptions = {},
  hooks: ArchiveUnbundleHooks = {},
): ArchiveUnbundleResult {
  const path = job.inputs[0];
  const threshold = sym64Threshold(hooks.env ?? process.env);
  return withFile(path, (archiveFile) => {
    // Member headers, names, bundle headers and payload heads are small reads close together: one block read each.
    const file = blockCachedSource(archiveFile);
    const meta = createEngine(engine.kind, METADATA_WINDOW);
    if (job.checkInputArchive) checkInputArchive(file, path, meta, engine);
    const archive = readArchive(file, { engine: meta });
    const opened: DecompressedInput[] = [];
    try {
      const context: MemberContext = { opened, ids: new Map() };
      const members = archive.members.map((m) => openMember(file, path, m, meta, engine, decompress, context));
      // Where each output member's bytes are: the entry's range in its member, or for a fat object's host entry
      // the member without its bundle sections, made once per member.
      const hostObjects = new Map<number, Uint8Array>();
      const payloadOf = (device: DeviceArchiveMember): { source: ByteSource; entry: IndexedEntry } => {
        const member = members[device.member];
        if (!member.objectHostEntries.has(device.entry.offset)) return { source: member.source, entry: device.entry };
        let host = hostObjects.get(device.member);
        if (host === undefined) {
          try {
            host = hostObject(readExact(member.source, 0, member.source.size));
          } catch (e) {
            if (isOffloadKitError(e)) throw new OffloadKitError(e.code, `'${member.name}': ${e.message}`, { offset: e.offset, field: e.field, cause: e });
            throw e;
          }
          hostObjects.set(device.member, host);
        }
        const bytes: Uint8Array = host;
        return { source: bytesSource(bytes), entry: { id: device.entry.id, offset: 0, size: bytes.length } };
      };
      const symbolCache = new Map<string, MemberSymbols>();
      const symbolsOf = (device: DeviceArchiveMember): PackedSymbols | null => {
        const key = `${device.member}:${device.entry.offset}:${device.entry.size}`;
        let symbols = symbolCache.get(key);
        if (symbols === undefined) {
          try {
            const payload = payloadOf(device);
            // Most device payloads are not symbolic (code objects, raw blobs): a look at the head settles that.
            symbols = memberSymbolicKind(sliceSource(payload.source, payload.entry.offset, payload.entry.size)) === "none"
              ? { kind: "none" }
              : archiveMemberSymbols(payloadForSymbols(engine, payload.source, payload.entry));
          } catch (e) {
            // createFileError(MemberName, ...): the output member's name, quoted.
            if (isOffloadKitError(e)) throw new OffloadKitError(e.code, `'${device.name}': ${e.message}`, { offset: e.offset, field: e.field, cause: e });
            throw e;
          }
          symbolCache.set(key, symbols);
        }
        // The writer warns each time it meets the member (once per output archive).
        if (symbols.kind === "unreadable") hooks.warn?.(`warning: '${device.name}': ${symbols.message}\n`);
        return symbols.kind === "symbols" ? symbols.symbols : null;
      };

      const staged: StagedArchive[] = [];
      planArchiveUnbundle(members, {
        targets: job.targets,
        allowMissingBundles: job.allowMissingBundles,
        hipOpenmpCompatible: job.hipOpenmpCompatible,
        inputPath: path,
      }, (target, list) => {
        const newMembers: NewArchiveMember[] = list.map((device) => ({ name: device.name, size: payloadOf(device).entry.size, symbols: symbolsOf(device) }));
        staged.push({ target, layout: layoutArchive(newMembers, { sym64Threshold: threshold }), members: list });
      });

      withOutputs((open) => {
        for (const archiveOut of staged) {
          const out = open(job.outputs[archiveOut.target], { bufferSize: OUTPUT_BUFFER });
          out.write(archiveOut.layout.head);
          archiveOut.members.forEach((device, i) => {
            out.write(archiveOut.layout.headers[i]);
            const payload = payloadOf(device);
            copyRange(engine, payload.source, payload.entry.offset, payload.entry.size, out);
            if (archiveOut.layout.padding[i]) out.write(NEWLINE);
          });
        }
      });
      return {
        inputSize: file.size,
        archives: staged.map((s) => ({
          target: job.targets[s.target],
          path: job.outputs[s.target],
          members: s.members.map((m) => m.name),
          size: s.layout.size,
        })),
      };
    } finally {
      for (const input of opened) input.close();
    }
  });
}
