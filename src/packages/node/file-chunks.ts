/**
 * A file read front to back in 1 MiB pieces, for the package writers: hashing an output, copying a scratch file
 * into a package, feeding an encoder. Each piece is a view of one reused buffer, valid until the next is asked for
 * (copy it to keep it).
 */
import { closeSync, openSync, readSync } from "node:fs";

const CHUNK = 1 << 20;

/** Reads `path` in chunks. */
export function* fileChunks(path: string): Generator<Uint8Array> {
  const fd = openSync(path, "r");
  try {
    const buffer = new Uint8Array(CHUNK);
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      if (n === 0) return;
      yield buffer.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}
