/**
 * Inputs that may be packages, for the CLI: a file that is a package (src/packages/walk.ts) gives each
 * of its members in turn, named `file!member!...`; any other file is given as itself. Either way `use`
 * sees a ByteSource that stays valid for the call only. `OFFLOAD_KIT_MAX_DECOMPRESSED` sets the package's
 * decompression budget (src/packages/budget.ts).
 */
import type { ByteSource } from "../engine/source.js";
import { parseDecompressionLimit } from "../packages/budget.js";
import { memberDisplayPath, walkPackage } from "../packages/walk.js";
import type { PackageProblem, PackageWalk, WalkOptions } from "../packages/walk.js";
import { FileSource } from "./file-source.js";
import { nodeDecoders, nodeSpooler } from "./package-io.js";

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

/** Opens `path` and hands `use` the file, or each member when it is a package. */
export async function forEachInput(
  path: string,
  use: (item: InputItem) => void | Promise<void>,
  options: Partial<Pick<WalkOptions, "maxDepth" | "maxDecompressed">> = {},
): Promise<InputWalk> {
  const source = FileSource.open(path);
  try {
    const problems: (PackageProblem & { name: string })[] = [];
    const walk = await walkPackage(source, path, {
      decoders: nodeDecoders(),
      spooler: nodeSpooler(),
      maxDepth: options.maxDepth,
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
