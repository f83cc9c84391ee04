/**
 * The bundler's file types (`-type=`), as clang-offload-bundler 19 knows them
 * (CreateFileHandler in clang/lib/Driver/OffloadBundler.cpp; seed 000 "Supported File Formats";
 * spec bundler.md §4): which ones are text bundles and which comment starts their marker lines.
 */

export type FileType = "i" | "ii" | "cui" | "hipi" | "d" | "ll" | "bc" | "s" | "o" | "a" | "gch" | "ast";

export interface FileTypeInfo {
  readonly type: FileType;
  readonly description: string;
  /** Text bundles: the line-comment that starts marker lines. */
  readonly comment?: string;
  /** Object-capable types: an object-file input uses sections, anything else the binary format. */
  readonly object?: boolean;
}

export const FILE_TYPES: readonly FileTypeInfo[] = [
  { type: "i", description: "cpp-output", comment: "//" },
  { type: "ii", description: "c++-cpp-output", comment: "//" },
  { type: "cui", description: "cuda-cpp-output", comment: "//" },
  { type: "hipi", description: "hip-cpp-output", comment: "//" },
  { type: "d", description: "dependency", comment: "#" },
  { type: "ll", description: "llvm", comment: ";" },
  { type: "bc", description: "llvm-bc" },
  { type: "s", description: "assembler", comment: "#" },
  { type: "o", description: "object", object: true },
  { type: "a", description: "archive of objects", object: true },
  { type: "gch", description: "precompiled-header" },
  { type: "ast", description: "clang AST file" },
];

const BY_NAME = new Map<string, FileTypeInfo>(FILE_TYPES.map((info) => [info.type, info]));

export function fileTypeInfo(type: string): FileTypeInfo | undefined {
  return BY_NAME.get(type);
}

/** LLVM's message for an unknown -type. */
export function invalidFileTypeMessage(type: string): string {
  return `'${type}': invalid file type specified`;
}
