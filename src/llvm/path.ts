/**
 * `llvm::sys::path::filename`, `stem` and `extension` in the POSIX style (llvm/lib/Support/Path.cpp),
 * over byte strings. Archive unbundling names its output members with them, so their corner cases
 * (a trailing '/' reads as ".", "//net" root names, "." and ".." keep their dots) are part of the
 * output format.
 */

function isSeparator(c: string): boolean {
  return c === "/";
}

/** Where the root directory starts: 0 for "/x", the separator after the name for "//net/x". */
function rootDirStart(path: string): number {
  if (path.length > 3 && isSeparator(path[0]) && path[0] === path[1] && !isSeparator(path[2])) {
    const at = path.indexOf("/", 2);
    return at === -1 ? -1 : at;
  }
  if (path.length > 0 && isSeparator(path[0])) return 0;
  return -1;
}

/** Start of the last component of `path` (a trailing separator is a component of its own). */
function filenamePos(path: string): number {
  if (path.length > 0 && isSeparator(path[path.length - 1])) return path.length - 1;
  const at = path.lastIndexOf("/", path.length - 1);
  if (at === -1 || (at === 1 && isSeparator(path[0]))) return 0;
  return at + 1;
}

/** `sys::path::filename`: the last component; "." when the path ends in a separator (not the root). */
export function filename(path: string): string {
  const rootDir = rootDirStart(path);
  let end = path.length;
  while (end > 0 && end - 1 !== rootDir && isSeparator(path[end - 1])) end--;
  if (path.length > 0 && isSeparator(path[path.length - 1]) && (rootDir === -1 || end - 1 > rootDir)) return ".";
  const start = filenamePos(path.substring(0, end));
  return path.substring(start, end);
}

function isDotOrDotDot(name: string): boolean {
  return name === "." || name === "..";
}

/** `sys::path::stem`: the filename up to its last '.' ("." and ".." are kept whole). */
export function stem(path: string): string {
  const name = filename(path);
  const dot = name.lastIndexOf(".");
  if (dot === -1 || isDotOrDotDot(name)) return name;
  return name.substring(0, dot);
}

/** `sys::path::extension`: the filename from its last '.' on, or "". */
export function extension(path: string): string {
  const name = filename(path);
  const dot = name.lastIndexOf(".");
  if (dot === -1 || isDotOrDotDot(name)) return "";
  return name.substring(dot);
}
