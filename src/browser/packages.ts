/**
 * Packages in browsers (src/packages/walk.ts): a File or Blob that is a wheel, .deb, .rpm, conda package,
 * tarball or image layout is walked member by member, each member inspected as `inspectSource` inspects a
 * file. Decoders are the platform's: DecompressionStream for gzip and raw deflate (and zstd where the
 * browser has it), `xz-decompress` (WebAssembly xz-embedded) for xz, src/packages/bzip2.ts for bzip2 (legacy
 * conda `.tar.bz2`, `.tar.bz2` tarballs).
 * Members are kept in memory (the in-memory spooler), each at most `maxMemberSize` bytes.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { decodeBzip2 } from "../packages/bzip2.js";
import type { Compression, Decoders } from "../packages/decoders.js";
import { memorySpooler } from "../packages/decoders.js";
import { memberDisplayPath, walkPackage } from "../packages/walk.js";
import type { PackageProblem, PackageWalk } from "../packages/walk.js";
import { editableContainerOf } from "../prune/index.js";
import { BROWSER_MAX_DECOMPRESSED, inspectSource } from "./inspect.js";
import { captureMember, isCaptureMiss } from "../inspect/stream-locate.js";
import type { InspectOptions, Inspection } from "./inspect.js";
import { collectKernels } from "../kernels/collect.js";
import type { FoundCodeObject } from "../kernels/collect.js";
import type { LocateOptions } from "../inspect/locate.js";
import type { ScanProblem } from "../inspect/scan.js";

type Format = "gzip" | "deflate-raw" | "zstd";

function toWebStream(input: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = input[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

async function* fromWebStream(stream: ReadableStream<Uint8Array>, label: string): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let ended = false;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (e) {
        if (e instanceof OffloadKitError) throw e;
        throw new OffloadKitError("DECODE_FAILED", `${label} data is corrupt or cut short (${e instanceof Error ? e.message : String(e)})`);
      }
      if (next.done) {
        ended = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // A stream left before its end is cancelled, not just let go: xz-decompress holds one lock for all its
    // streams and releases it only at the end or on cancel, so an abandoned one (a walk that found its member,
    // a sniff of the first tar block) would make the next xz stream wait for ever.
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function platform(format: Format, input: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let decoder: DecompressionStream;
  try {
    decoder = new DecompressionStream(format as CompressionFormat);
  } catch {
    throw new OffloadKitError("DECODER_MISSING", `this browser's DecompressionStream cannot decode ${format}`);
  }
  return fromWebStream(toWebStream(input).pipeThrough(decoder as unknown as ReadableWritablePair<Uint8Array, Uint8Array>), format);
}

async function* xz(input: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const module = (await import("xz-decompress")) as unknown as { default?: { XzReadableStream: unknown }; XzReadableStream?: unknown };
  const XzReadableStream = (module.XzReadableStream ?? module.default!.XzReadableStream) as new (s: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>;
  yield* fromWebStream(new XzReadableStream(toWebStream(input)), "xz");
}

export function browserDecoders(): Decoders {
  return {
    decode(method: Compression, input) {
      if (method === "gzip" || method === "zstd") return platform(method, input);
      if (method === "xz") return xz(input);
      return decodeBzip2(input);
    },
    inflateRaw: (input) => platform("deflate-raw", input),
  };
}

export interface PackageMemberInspection extends Inspection {
  /** The member's path inside the package, one element per level. */
  readonly member: readonly string[];
  /**
   * The container `prune` would take the member for (`bundle`, `linked ELF`, ...; src/prune/containers.ts),
   * read while the member is in hand; undefined when prune edits no such file.
   */
  readonly editableAs?: string;
}

export interface PackageInspection {
  readonly package: PackageWalk;
  /** Members holding device code (or failing to be read by the locator). */
  readonly members: readonly PackageMemberInspection[];
  readonly problems: readonly PackageProblem[];
}

/** Thrown from onMember to end a walk once the member sought is found. */
class FoundMember {
  constructor(readonly source: ByteSource) {}
}

/**
 * The member of package `source` at `member` (its path inside it, as PackageMemberInspection gives it), in
 * memory; the package is walked again up to it (members are not kept between requests). NO_SUCH_MEMBER
 * when the package has no such member, or `source` is not a package.
 */
export async function readPackageMember(source: ByteSource, name: string, member: readonly string[], options: { readonly maxMemberSize?: number } = {}): Promise<ByteSource> {
  const wanted = member.join("\0");
  try {
    await walkPackage(source, name, {
      decoders: browserDecoders(),
      spooler: memorySpooler(options.maxMemberSize ?? BROWSER_MAX_DECOMPRESSED),
      onMember: ({ path, source: found }) => {
        if (path.slice(1).join("\0") === wanted) throw new FoundMember(found);
      },
      onProblem: () => {},
    });
  } catch (e) {
    if (e instanceof FoundMember) return e.source;
    throw e;
  }
  throw new OffloadKitError("NO_SUCH_MEMBER", `${memberDisplayPath([name, ...member])}: no such member in the package`);
}

/** Members from this size on are located as they stream (below it, holding one costs little). */
const STREAM_MIN_SIZE = 16 * 1024 * 1024 + 1;

/** editableContainerOf, undefined where telling the container fails on damage (prune would then fail too). */
function editableAsOf(member: ByteSource): string | undefined {
  try {
    return editableContainerOf(member);
  } catch (e) {
    if (e instanceof OffloadKitError) return undefined;
    throw e;
  }
}

/**
 * Walks `source` if it is a package and inspects each member; undefined when it is not a package (then
 * `inspectSource` is the answer).
 */
export async function inspectPackage(
  source: ByteSource,
  name: string,
  options: InspectOptions & { readonly maxMemberSize?: number } = {},
): Promise<PackageInspection | undefined> {
  const members: PackageMemberInspection[] = [];
  const problems: PackageProblem[] = [];
  const walk = await walkPackage(source, name, {
    decoders: browserDecoders(),
    spooler: memorySpooler(options.maxMemberSize ?? BROWSER_MAX_DECOMPRESSED),
    // A large ELF member of a stream is located as it goes by (src/inspect/stream-locate.ts), as the CLI's
    // ls and sizes do it: never held, so a 1.31 GB library in a .deb is shown although no member over
    // BROWSER_MAX_DECOMPRESSED can be held; a read of a byte not kept decodes the member again, held.
    streamMembers: { minSize: STREAM_MIN_SIZE, start: captureMember, missed: isCaptureMiss },
    onMember: ({ path, source: member }) => {
      const inspection = inspectSource(member, memberDisplayPath(path), options);
      const r = inspection.report;
      if (r.bundles.length === 0 && r.offloadBinaries.length === 0 && r.problems.length === 0) return;
      const editableAs = editableAsOf(member);
      members.push({ ...inspection, member: path.slice(1), ...(editableAs !== undefined ? { editableAs } : {}) });
    },
    onProblem: (p) => problems.push(p),
  });
  return walk === undefined ? undefined : { package: walk, members, problems };
}

/** One member of a package and its code objects (src/kernels/collect.ts), as `offload-kit kernels` lists it. */
export interface PackageMemberKernels {
  /** The member's path inside the package, one element per level. */
  readonly member: readonly string[];
  readonly codeObjects: readonly FoundCodeObject[];
  readonly problems: readonly ScanProblem[];
}

/**
 * The kernels of every member of package `source`, as `offload-kit kernels PACKAGE` gathers them
 * (src/kernels/node/gather.ts: members without code objects or problems left out); undefined when `source`
 * is not a package. Each member is held in memory while its code objects are read (a kernel's note and
 * symbols are anywhere in it, so the streaming locator's capture would miss them), then dropped.
 */
export async function collectPackageKernels(
  source: ByteSource,
  name: string,
  options: Omit<LocateOptions, "onBundle" | "onOffloadBinaries"> & { readonly keepMetadata?: boolean; readonly maxMemberSize?: number },
): Promise<{ readonly members: readonly PackageMemberKernels[]; readonly problems: readonly PackageProblem[] } | undefined> {
  const members: PackageMemberKernels[] = [];
  const problems: PackageProblem[] = [];
  const walk = await walkPackage(source, name, {
    decoders: browserDecoders(),
    spooler: memorySpooler(options.maxMemberSize ?? BROWSER_MAX_DECOMPRESSED),
    onMember: ({ path, source: member }) => {
      const found = collectKernels(member, options);
      if (found.codeObjects.length === 0 && found.location.problems.length === 0) return;
      members.push({ member: path.slice(1), codeObjects: found.codeObjects, problems: found.location.problems });
    },
    onProblem: (p) => problems.push(p),
  });
  return walk === undefined ? undefined : { members, problems };
}
