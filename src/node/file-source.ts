/**
 * A file as a ByteSource: positioned reads (pread) into whatever buffer the caller passes, usually
 * the engine window, so no file is ever held whole in memory. Whatever is not a regular file (standard
 * input "-" as LLVM's getFileOrSTDIN, a pipe, a FIFO, `/dev/stdin`, `<(...)`, a character device) cannot
 * seek and has no size: it is read to its end once, as a stream, into a temporary file (src/node/spool.ts).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { isOffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { fileError } from "./errors.js";
import { OffloadKitError } from "../engine/errors.js";
import { limitText, spoolStream, streamLimit } from "./spool.js";

/** For an input read whole whatever it is: the most bytes it may have, and what it is, for the message. */
export interface OpenLimit {
  readonly limit: number;
  /** `the replacement (--with)`. */
  readonly what: string;
}

export class FileSource implements ByteSource {
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    readonly size: number,
    private readonly cleanup?: () => void,
  ) {}

  /**
   * Opens `path`; a stream is spooled under the stream limit (src/node/spool.ts), and under `bounded.limit`
   * too when given, which a regular file must also keep to.
   */
  static open(path: string, bounded?: OpenLimit): FileSource {
    if (path === "-") return FileSource.fromStream(0, "-", bounded);
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (e) {
      throw fileError(path, e);
    }
    let kept = false;
    try {
      const stat = fstatSync(fd);
      if (stat.isDirectory()) throw fileError(path, Object.assign(new Error("is a directory"), { code: "EISDIR" }));
      if (!stat.isFile()) return FileSource.fromStream(fd, path, bounded);
      if (bounded !== undefined && stat.size > bounded.limit) {
        throw new OffloadKitError("INPUT_TOO_LARGE", `'${path}': ${bounded.what} is ${stat.size} bytes, more than ${limitText(bounded.limit)}, the most it may be`,
          { offset: bounded.limit, field: bounded.what });
      }
      kept = true;
      return new FileSource(path, fd, stat.size);
    } catch (e) {
      throw isOffloadKitError(e) ? e : fileError(path, e);
    } finally {
      if (!kept) closeSync(fd);
    }
  }

  /**
   * The open stream `input` read to its end into a temporary file, which the source then reads (and removes
   * when closed); `path` names it in messages. The caller still owns `input`.
   */
  static fromStream(input: number, path: string, bounded?: OpenLimit): FileSource {
    const spool = spoolStream(input, path, streamLimit(bounded?.limit), bounded?.what);
    return new FileSource(path, spool.fd, spool.size, spool.remove);
  }

  read(dest: Uint8Array, position: number): number {
    if (dest.length === 0) return 0;
    try {
      return readSync(this.fd, dest, 0, dest.length, position);
    } catch (e) {
      throw fileError(this.path, e);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    this.cleanup?.();
  }
}

/** Runs `use` with the file open, closing it afterwards whatever happens. */
export function withFile<T>(path: string, use: (source: FileSource) => T): T {
  const source = FileSource.open(path);
  try {
    return use(source);
  } finally {
    source.close();
  }
}
