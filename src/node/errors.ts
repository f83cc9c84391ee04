/**
 * File-system errors worded like LLVM's (`createFileError(path, EC)` prints `'<path>': <strerror>`),
 * so the drop-in CLIs report a missing input the way the native tools do.
 */
import { OffloadKitError } from "../engine/errors.js";

// std::error_code messages for the errno values file operations produce (glibc strerror texts).
const STRERROR: Record<string, string> = {
  ENOENT: "No such file or directory",
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  EEXIST: "File exists",
  ENOSPC: "No space left on device",
  EROFS: "Read-only file system",
  EMFILE: "Too many open files",
  ENAMETOOLONG: "File name too long",
  ELOOP: "Too many levels of symbolic links",
  EIO: "Input/output error",
  EFBIG: "File too large",
  EXDEV: "Invalid cross-device link",
  EBUSY: "Device or resource busy",
  EINVAL: "Invalid argument",
};

/** The strerror text LLVM would print for a Node file-system error. */
export function strerror(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return (code && STRERROR[code]) ?? (cause instanceof Error ? cause.message : String(cause));
}

export function fileError(path: string, cause: unknown): OffloadKitError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const text = strerror(cause);
  return new OffloadKitError(code ?? "IO_ERROR", `'${path}': ${text}`, { cause });
}
