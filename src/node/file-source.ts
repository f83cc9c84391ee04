/**
 * A file as a ByteSource: positioned reads (pread) into whatever buffer the caller passes, usually
 * the engine window, so no file is ever held whole in memory. Standard input ("-", as LLVM's
 * getFileOrSTDIN) cannot seek, so it is spooled to a temporary file first.
 */
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ByteSource } from "../engine/source.js";
import { fileError } from "./errors.js";

/** Every regular file this process opened as an input (device:inode), so no output is renamed over one. */
const openedInputs = new Set<string>();

export function isOpenedInput(stat: { dev: number; ino: number }): boolean {
  return openedInputs.has(`${stat.dev}:${stat.ino}`);
}

export class FileSource implements ByteSource {
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    readonly size: number,
    private readonly cleanup?: () => void,
  ) {}

  static open(path: string): FileSource {
    if (path === "-") return FileSource.spoolStdin();
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (e) {
      throw fileError(path, e);
    }
    try {
      const stat = fstatSync(fd);
      if (stat.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      if (stat.isFile()) openedInputs.add(`${stat.dev}:${stat.ino}`);
      return new FileSource(path, fd, stat.size);
    } catch (e) {
      closeSync(fd);
      throw fileError(path, e);
    }
  }

  private static spoolStdin(): FileSource {
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-stdin-"));
    const file = join(dir, "stdin");
    const fd = openSync(file, "w+");
    const chunk = new Uint8Array(1 << 20);
    let size = 0;
    for (;;) {
      let n: number;
      try {
        n = readSync(0, chunk, 0, chunk.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") continue;
        if ((e as NodeJS.ErrnoException).code === "EOF") break;
        throw fileError("-", e);
      }
      if (n === 0) break;
      writeSync(fd, chunk, 0, n, size);
      size += n;
    }
    return new FileSource("-", fd, size, () => rmSync(dir, { recursive: true, force: true }));
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
