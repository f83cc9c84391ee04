/**
 * Inputs that may be packages, for the CLI: a file that is a package (src/packages/walk.ts) gives each
 * of its members in turn, named `file!member!...`; any other file is given as itself. Either way `use`
 * sees a ByteSource that stays valid for the call only. `OFFLOAD_KIT_MAX_DECOMPRESSED` sets the package's
 * decompression budget (src/packages/budget.ts).
 */
import type { ByteSource } from "../../engine/source.js";
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

/** Opens `path` and hands `use` the file, or each member when it is a package. */
export async function forEachInput(
  path: string,
  use: (item: InputItem) => void | Promise<void>,
  options: InputOptions = {},
): Promise<InputWalk> {
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
