/**
 * Inputs that may be packages, for the CLI: a file that is a package (src/packages/walk.ts) gives each
 * of its members in turn, named `file!member!...`; any other file is given as itself. Either way `use`
 * sees a ByteSource that stays valid for the call only. `OFFLOAD_KIT_MAX_DECOMPRESSED` sets the package's
 * decompression budget (src/packages/budget.ts).
 */
import { statSync } from "node:fs";
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact } from "../../engine/source.js";
import { parseDecompressionLimit } from "../budget.js";
import { memberDisplayPath, walkPackage } from "../walk.js";
import type { PackageProblem, PackageWalk, WalkOptions } from "../walk.js";
import { captureMember, isCaptureMiss } from "../../inspect/stream-locate.js";
import { FileSource } from "../../node/file-source.js";
import { SPOOL_MEMORY_LIMIT, nodeDecoders, nodeSpooler } from "./io.js";

export interface InputItem {
  /** `file` for a plain file; `file!a!b` for a member. */
  readonly name: string;
  /** The member's path inside the package, one element per level (undefined for a plain file). */
  readonly member?: readonly string[];
  readonly source: ByteSource;
}

export interface InputWalk {
  /** Set when the input was a package. */
  readonly package?: PackageWalk;
  readonly problems: readonly (PackageProblem & { readonly name: string })[];
}

export interface InputOptions extends Partial<Pick<WalkOptions, "maxDepth" | "maxDecompressed">> {
  /**
   * `use` only locates (ls, sizes, check; not extract): a member of a compressed stream that would be
   * spooled to disk is located as it streams past instead (src/inspect/stream-locate.ts), and `use` may
   * be called a second time for it, with the member spooled, when its first call throws a CaptureMiss.
   * `OFFLOAD_KIT_STREAM=off` in the environment spools every member as before; `=all` streams members
   * of any size (tests).
   */
  readonly locateOnly?: boolean;
}

/** The streaming of `InputOptions.locateOnly`, as the environment sets it. */
function memberStreaming(env: Readonly<Record<string, string | undefined>>): WalkOptions["streamMembers"] {
  if (env.OFFLOAD_KIT_STREAM === "off") return undefined;
  return { minSize: env.OFFLOAD_KIT_STREAM === "all" ? 0 : SPOOL_MEMORY_LIMIT + 1, start: captureMember, missed: isCaptureMiss };
}

/**
 * A `pkg!member` name as `ls` prints it (`x.deb!usr/lib/y.so`, `img.tar!a.whl!lib/z.so`): the package file
 * (the longest existing file before a `!`) and the member's path at each level. Undefined when `path`
 * exists as it is (a file may have `!` in its name) or names no package file.
 */
export function splitMemberPath(path: string): { readonly file: string; readonly member: readonly string[] } | undefined {
  if (!path.includes("!") || exists(path)) return undefined;
  // The first `!` after which the rest is the member: the package is the shortest prefix that is a file.
  for (let at = path.indexOf("!"); at > 0; at = path.indexOf("!", at + 1)) {
    const file = path.slice(0, at);
    if (isFile(file)) return { file, member: path.slice(at + 1).split("!") };
  }
  return undefined;
}

function exists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** Thrown from onMember to end a walk once the member named was handed on. */
class MemberDone {}

/** The one member a `pkg!member` name names, handed to `use` as a file of that name; NO_SUCH_MEMBER when absent. */
async function forNamedMember(
  path: string,
  named: { readonly file: string; readonly member: readonly string[] },
  use: (item: InputItem) => void | Promise<void>,
  options: InputOptions,
): Promise<InputWalk> {
  const source = FileSource.open(named.file);
  const wanted = named.member.join("\0");
  const problems: (PackageProblem & { name: string })[] = [];
  try {
    const walk = await walkPackage(source, named.file, {
      decoders: nodeDecoders(),
      spooler: nodeSpooler(),
      maxDepth: options.maxDepth,
      streamMembers: options.locateOnly === true ? memberStreaming(process.env) : undefined,
      maxDecompressed: options.maxDecompressed ?? parseDecompressionLimit(process.env.OFFLOAD_KIT_MAX_DECOMPRESSED),
      onMember: async (member) => {
        if (member.path.slice(1).join("\0") !== wanted) return;
        await use({ name: path, source: member.source });
        throw new MemberDone();
      },
      // Only the problems on the way to the member (its containers, itself) are this input's.
      onProblem: (problem) => {
        const at = problem.path.slice(1);
        if (at.every((level, i) => named.member[i] === level)) problems.push({ ...problem, name: memberDisplayPath(problem.path) });
      },
    });
    if (walk === undefined) throw new OffloadKitError("NOT_A_PACKAGE", `'${path}': '${named.file}' is not a package offload-kit opens`, { offset: 0 });
  } catch (e) {
    if (e instanceof MemberDone) return { problems };
    throw e;
  } finally {
    source.close();
  }
  if (problems.length > 0) return { problems };
  throw new OffloadKitError("NO_SUCH_MEMBER", `'${path}': no such member in the package`);
}

/**
 * The member a `pkg!member` name names, kept for random access after the walk (memory up to 16 MiB, else a
 * temporary file), for the editing commands, whose inputs are read after they are opened; undefined when
 * `path` is no such name. The caller closes it.
 */
export async function openNamedMember(path: string): Promise<(ByteSource & { close(): void }) | undefined> {
  const named = splitMemberPath(path);
  if (named === undefined) return undefined;
  let kept: (ByteSource & { close(): void }) | undefined;
  await forNamedMember(path, named, async ({ source }) => {
    const spooled = await nodeSpooler().spool(chunksOf(source), source.size, path);
    let closed = false;
    // Closed by whoever is done first (the editor after use, or the command when the run stops early).
    kept = {
      size: spooled.source.size, bytes: spooled.source.bytes, read: (dest, position) => spooled.source.read(dest, position),
      close: () => {
        if (closed) return;
        closed = true;
        spooled.close();
      },
    };
  }, {});
  if (kept === undefined) throw new OffloadKitError("NO_SUCH_MEMBER", `'${path}': no such member in the package`);
  return kept;
}

async function* chunksOf(source: ByteSource): AsyncIterable<Uint8Array> {
  const window = 1 << 20;
  for (let at = 0; at < source.size; at += window) yield readExact(source, at, Math.min(window, source.size - at));
}

/**
 * Opens `path` and hands `use` the file, or each member when it is a package; a `pkg!member` name (as `ls`
 * prints it) hands on that one member, as a file of that name.
 */
export async function forEachInput(
  path: string,
  use: (item: InputItem) => void | Promise<void>,
  options: InputOptions = {},
): Promise<InputWalk> {
  const named = splitMemberPath(path);
  if (named !== undefined) return forNamedMember(path, named, use, options);
  const source = FileSource.open(path);
  try {
    const problems: (PackageProblem & { name: string })[] = [];
    const walk = await walkPackage(source, path, {
      decoders: nodeDecoders(),
      spooler: nodeSpooler(),
      maxDepth: options.maxDepth,
      streamMembers: options.locateOnly === true ? memberStreaming(process.env) : undefined,
      maxDecompressed: options.maxDecompressed ?? parseDecompressionLimit(process.env.OFFLOAD_KIT_MAX_DECOMPRESSED),
      onMember: (member) => use({ name: memberDisplayPath(member.path), member: member.path.slice(1), source: member.source }),
      onProblem: (problem) => problems.push({ ...problem, name: memberDisplayPath(problem.path) }),
    });
    if (walk === undefined) await use({ name: path, source });
    return { package: walk, problems };
  } finally {
    source.close();
  }
}
