/**
 * The package walker's platform in Node (src/packages/decoders.ts): stream decoders and the spooler.
 *
 * Decoders, chosen by measurement (README, "Packages"): gzip and raw deflate from node:zlib; zstd from
 * node:zlib where it has it (Node >= 22.15), else the `zstd` program; xz from the `xz` program when it is
 * on PATH (liblzma, 3.3x faster than the WebAssembly xz-embedded of `xz-decompress` on librocsparse0's
 * data.tar.xz), else `xz-decompress`; bzip2 from the `bzip2` program, else src/packages/bzip2.ts (pure
 * TypeScript, 2.5-3x the program's CPU time). A decoder program runs as a child process fed through a pipe,
 * so it decodes on the second core while this one walks; xz 5.4 and later decodes a multi-block stream on
 * threads of its own (`-T0`, memory capped), as dpkg-deb does. A program's output is read into one reused
 * buffer (`pipeChunks`). `OFFLOAD_KIT_XZ=wasm` forces the WebAssembly xz decoder, `OFFLOAD_KIT_BZIP2=js`
 * the TypeScript bzip2 decoder.
 *
 * The spooler keeps a member in memory up to `SPOOL_MEMORY_LIMIT` (16 MiB) and in a temporary file
 * (under os.tmpdir(), removed when the member is done) beyond that; a member larger than its declared
 * size is an error as soon as the extra byte arrives.
 */
import { createRequire } from "node:module";
import { once } from "node:events";
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { Transform } from "node:stream";
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { bytesSource } from "../../engine/source.js";
import type { Compression, Decoders, SpooledMember, Spooler } from "../decoders.js";
import { decodeBzip2 } from "../bzip2.js";
import { tooLarge } from "../decoders.js";
import { zlibModule } from "../../node/builtins.js";
import { fileError } from "../../node/errors.js";
import { concatBytes } from "../../formats/bytes.js";

// Loaded when a decoder program is first run (start-up cost, as src/node/builtins.ts explains).
const childProcess = (): typeof import("node:child_process") => createRequire(import.meta.url)("node:child_process");
const netModule = (): typeof import("node:net") => createRequire(import.meta.url)("node:net");

/** How much input node:zlib gets per write, and how much output per chunk. */
const TRANSFORM_PIECE = 64 * 1024;

/** How much a spool file is written at a time. */
const SPOOL_WRITE_SIZE = 1 << 20;

/** Members up to this size are kept in memory; larger ones go to a temporary file. */
export const SPOOL_MEMORY_LIMIT = 16 * 1024 * 1024;

const programs = new Map<string, string | undefined>();

/**
 * Decoding memory allowed to the xz program's threads (its --memlimit-mt-decompress): two threads on
 * librocsparse0's data.tar.xz (53 blocks of 24 MiB) fit in it (peak RSS 75 MiB; 123 MiB without a limit,
 * measured), so the peak of the whole process stays under 128 MiB.
 */
const XZ_THREAD_MEMORY = "80MiB";
let xzThreadArgs: readonly string[] | undefined;

/**
 * `-T0` and its memory limit when the xz program decodes in threads (5.4 and later; a multi-block file,
 * as dpkg-deb writes since 1.21, decodes on both cores: dpkg-deb itself does so), else nothing.
 */
function xzThreads(path: string): readonly string[] {
  if (xzThreadArgs === undefined) {
    let version = "";
    try {
      version = childProcess().execFileSync(path, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      // An xz that cannot say its version decodes as before, on one thread.
    }
    const match = /(\d+)\.(\d+)\.\d+/.exec(version);
    const threaded = match !== null && (Number(match[1]) > 5 || (Number(match[1]) === 5 && Number(match[2]) >= 4));
    xzThreadArgs = threaded ? ["-T0", `--memlimit-mt-decompress=${XZ_THREAD_MEMORY}`] : [];
  }
  return xzThreadArgs;
}

/** The full path of a program on PATH, or undefined. */
function program(name: string): string | undefined {
  if (!programs.has(name)) {
    const dirs = (process.env.PATH ?? "").split(delimiter).filter((d) => d !== "");
    programs.set(name, dirs.map((d) => join(d, name)).find((p) => existsSync(p)));
  }
  return programs.get(name);
}

function decodeError(label: string, cause: unknown): OffloadKitError {
  if (isOffloadKitError(cause)) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new OffloadKitError("DECODE_FAILED", `${label} data is corrupt or cut short (${message})`, { cause });
}

/**
 * A readable's chunks, in order, then its error if it fails: what it produced before failing is handed
 * out first (the members before a corrupt or cut stream are still reported). Holds at most a few chunks.
 */
async function* drain(readable: NodeJS.ReadableStream & { destroy(): void }): AsyncGenerator<Uint8Array> {
  const queue: Uint8Array[] = [];
  let failure: { error: unknown } | undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  readable.on("data", (chunk: Uint8Array) => {
    queue.push(chunk);
    if (queue.length >= 8) readable.pause();
    wake?.();
  });
  readable.on("end", () => {
    ended = true;
    wake?.();
  });
  readable.on("error", (error: unknown) => {
    failure = { error };
    wake?.();
  });
  for (;;) {
    if (queue.length > 0) {
      const chunk = queue.shift()!;
      if (queue.length < 2) readable.resume();
      yield chunk;
      continue;
    }
    if (failure !== undefined) throw failure.error;
    if (ended) return;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
}

/** Resolves when `stream` has consumed `chunk` (its write callback); rejects with the write's error. */
function written(stream: NodeJS.WritableStream, chunk: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(chunk, (error?: Error | null) => (error ? reject(error) : resolve()));
  });
}

/** How much one read of a decoder program's output may take (a pipe gives at most what it holds, 64 KiB or more). */
const PIPE_READ_SIZE = 1 << 20;

/**
 * A decoder program's output, read into one reused buffer (net.Socket's `onread`): each chunk is a view
 * valid until the next one is asked for, so whoever keeps bytes copies them (the spooler, the capture of
 * src/inspect/stream-locate.ts and the tar reader do; the decoders' feeders above copy what they write).
 * Node's own reads allocate a fresh 64 KiB Buffer each: 1.31 GB of garbage for librocsparse0's
 * data.tar.xz, which held a process reading it at 100 MiB RSS against 53 MiB with one buffer, and cost
 * 0.55 s of CPU against 0.26 s (`cat` of the decoded tar through a pipe, Node 20, measured). The
 * stream's handle is taken over from the child's stdout at once, before any read; without one (never
 * seen in Node 20 and 24) the stream is read as before.
 */
async function* pipeChunks(stdout: NodeJS.ReadableStream & { destroy(): void; _handle?: unknown }): AsyncGenerator<Uint8Array> {
  const handle = stdout._handle;
  if (handle === undefined || handle === null) {
    yield* drain(stdout);
    return;
  }
  // The child's own stdout object must not start the handle reading again: on the child's exit node
  // resumes every readable stdio stream (flushStdio), which could read into the buffer while a chunk
  // handed out may still be in use.
  (stdout as { readable: boolean }).readable = false;
  const buffer = new Uint8Array(PIPE_READ_SIZE);
  let filled = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  // `handle` is an option of net.Socket that @types/node does not list.
  const socket = new (netModule().Socket)({
    handle,
    readable: true,
    writable: false,
    onread: {
      buffer,
      callback: (n: number) => {
        filled = n;
        wake?.();
        // Paused until the chunk has been handed on and the next one is asked for.
        return false;
      },
    },
  } as import("node:net").SocketConstructorOpts);
  socket.on("end", () => {
    ended = true;
    wake?.();
  });
  socket.on("error", (error: unknown) => {
    failure = { error };
    wake?.();
  });
  try {
    for (;;) {
      if (filled > 0) {
        const n = filled;
        filled = 0;
        yield buffer.subarray(0, n);
        socket.resume();
        continue;
      }
      if (failure !== undefined) throw failure.error;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    socket.destroy();
  }
}

/**
 * The last bytes of a stream held back by throughTransform. node:zlib drops whatever a call decoded when
 * that call fails, and gzip's data check fails in the call that reads its 8-byte trailer: fed on its own,
 * after everything before it was decoded and handed out, the trailer fails a call that decoded nothing,
 * so the members before a bad CRC are still reported (measured: a 3 KiB tar.gz with a bad CRC lost all of
 * them when fed in one piece).
 */
const TRAILER_HOLD = 8;

async function* throughTransform(transform: Transform, input: AsyncIterable<Uint8Array>, label: string): AsyncGenerator<Uint8Array> {
  let inputError: unknown;
  // `event`, or the transform's end either way (its listeners removed, unlike racing two `once`s).
  const until = (event: string) => new Promise<void>((resolve) => {
    const done = () => {
      for (const e of [event, "close", "error"]) transform.off(e, done);
      resolve();
    };
    for (const e of [event, "close", "error"]) transform.on(e, done);
  });
  const write = async (bytes: Uint8Array) => {
    // Fed in pieces, so what a piece decodes to is handed on before a later piece can fail the stream.
    for (let at = 0; at < bytes.length; at += TRANSFORM_PIECE) {
      // Each piece consumed before the next is asked for: the bytes may be a view of a buffer their
      // producer reuses (pipeChunks), so they must not wait in the transform's queue.
      await written(transform, bytes.subarray(at, at + TRANSFORM_PIECE));
    }
  };
  const feeding = (async () => {
    let held: Uint8Array = new Uint8Array(0);
    for await (const chunk of input) {
      const keep = Math.min(TRAILER_HOLD, held.length + chunk.length);
      const release = held.length + chunk.length - keep;
      const fromHeld = Math.min(release, held.length);
      await write(held.subarray(0, fromHeld));
      await write(chunk.subarray(0, release - fromHeld));
      held = concatBytes([held.subarray(fromHeld), chunk.subarray(release - fromHeld)]);
    }
    // Everything written so far decoded (the write callback) and handed out (nothing left buffered), then the tail.
    await new Promise<void>((resolve) => {
      transform.write(new Uint8Array(0), () => resolve());
      transform.once("close", resolve);
    });
    while (transform.readableLength > 0 && !transform.destroyed) await until("data");
    transform.end(held);
  })().catch((e) => {
    // The input failed (a nested decoder, the budget, a read): what arrived before is decoded first, so the
    // failure reported is the first in stream order whatever the thread pool's timing (destroying here made
    // a corrupt gzip inside a corrupt gzip report either one: found by the walk campaign, case 24536).
    inputError = e;
    transform.end();
  });
  try {
    yield* drain(transform);
    await feeding;
    if (inputError !== undefined) throw inputError;
  } catch (e) {
    // The decoder's own verdict on the bytes it had, unless it only says that they stopped short.
    const cutShort = (e as { code?: unknown } | undefined)?.code === "Z_BUF_ERROR";
    throw decodeError(label, inputError !== undefined && (e === inputError || cutShort) ? inputError : e);
  } finally {
    transform.destroy();
  }
}

async function* throughProgram(path: string, args: readonly string[], input: AsyncIterable<Uint8Array>, label: string): AsyncGenerator<Uint8Array> {
  const child = childProcess().spawn(path, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString();
  });
  const stderrClosed = once(child.stderr, "close").catch(() => {});
  // 'exit', then stderr's end: 'close' waits for a stdout that pipeChunks has taken over and may never come.
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => resolve(code));
  }).then(async (code) => {
    await stderrClosed;
    return code;
  });
  exited.catch(() => {});
  // The program may stop reading early (corrupt data): its stdin then fails with EPIPE, which is not our error.
  child.stdin.on("error", () => {});
  // Errors of the input (a failing read of the package) are ours to report; a failing write (EPIPE: the
  // program stopped reading, corrupt data) is not: the program's exit status says what went wrong.
  let inputError: unknown;
  const feeding = (async () => {
    const iterator = input[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await iterator.next();
        } catch (e) {
          inputError = e;
          child.kill();
          return;
        }
        if (next.done === true) return;
        if (child.stdin.destroyed || !child.stdin.writable) {
          await iterator.return?.();
          return;
        }
        // Written out before the next is asked for: the chunk may be a view of a buffer its producer
        // reuses (pipeChunks), so it must not wait in the stream's queue.
        await Promise.race([written(child.stdin, next.value), exited]);
      }
    } catch {
      // The write side failed (see above).
    } finally {
      child.stdin.end();
    }
  })();
  let finished = false;
  try {
    yield* pipeChunks(child.stdout);
    const code = await exited.catch((e: unknown) => {
      throw new OffloadKitError("DECODER_MISSING", `could not run ${path} to decode ${label} (${e instanceof Error ? e.message : String(e)})`);
    });
    await feeding;
    if (inputError !== undefined) throw inputError;
    if (code !== 0) throw new OffloadKitError("DECODE_FAILED", `${label} data is corrupt or cut short (${stderr.trim().split("\n")[0] || `${path} exited with ${code}`})`);
    finished = true;
  } finally {
    if (!finished) child.kill();
  }
}

async function* xzWasm(input: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const module = (await import("xz-decompress")) as unknown as { default?: { XzReadableStream: unknown }; XzReadableStream?: unknown };
  const XzReadableStream = (module.XzReadableStream ?? module.default!.XzReadableStream) as new (s: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>;
  const web = (ReadableStream as unknown as { from(i: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> }).from(input);
  try {
    for await (const chunk of new XzReadableStream(web) as unknown as AsyncIterable<Uint8Array>) yield chunk;
  } catch (e) {
    throw decodeError("xz", e);
  }
}

export function nodeDecoders(env: Readonly<Record<string, string | undefined>> = process.env): Decoders {
  const zlib = zlibModule();
  return {
    decode(method: Compression, input: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
      switch (method) {
        case "gzip":
          return throughTransform(zlib.createGunzip({ chunkSize: TRANSFORM_PIECE }), input, "gzip");
        case "zstd": {
          const create = (zlib as unknown as { createZstdDecompress?: (o?: object) => Transform }).createZstdDecompress;
          if (create !== undefined) return throughTransform(create({ chunkSize: TRANSFORM_PIECE }), input, "zstd");
          const zstd = program("zstd");
          if (zstd === undefined) throw new OffloadKitError("DECODER_MISSING", "zstd streams need Node >= 22.15 or the zstd program on PATH");
          return throughProgram(zstd, ["-dcq"], input, "zstd");
        }
        case "xz": {
          const xz = env.OFFLOAD_KIT_XZ === "wasm" ? undefined : program("xz");
          return xz === undefined ? xzWasm(input) : throughProgram(xz, ["-dcq", ...xzThreads(xz)], input, "xz");
        }
        case "bzip2": {
          const bzip2 = env.OFFLOAD_KIT_BZIP2 === "js" ? undefined : program("bzip2");
          return bzip2 === undefined ? decodeBzip2(input) : throughProgram(bzip2, ["-dcq"], input, "bzip2");
        }
      }
    },
    inflateRaw(input) {
      return throughTransform(zlib.createInflateRaw({ chunkSize: TRANSFORM_PIECE }), input, "deflate");
    },
  };
}

/** A member spooled to a temporary file: positioned reads, the file removed on close. */
function fileMember(dir: string, fd: number, size: number): SpooledMember {
  let closed = false;
  return {
    where: "file",
    source: {
      size,
      read(dest, position) {
        const n = Math.max(0, Math.min(dest.length, size - position));
        return n === 0 ? 0 : readSync(fd, dest, 0, n, position);
      },
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Memory up to `memoryLimit`, a temporary file beyond (see the module comment). */
export function nodeSpooler(memoryLimit = SPOOL_MEMORY_LIMIT): Spooler {
  return {
    async spool(chunks, size, name) {
      const parts: Uint8Array[] = [];
      let total = 0;
      let file: { dir: string; fd: number } | undefined;
      let stage = new Uint8Array(0);
      let staged = 0;
      const toFile = () => {
        const dir = mkdtempSync(join(tmpdir(), "offload-kit-member-"));
        const path = join(dir, "member");
        let fd: number;
        try {
          fd = openSync(path, "w+");
        } catch (e) {
          rmSync(dir, { recursive: true, force: true });
          throw fileError(path, e);
        }
        file = { dir, fd };
        stage = new Uint8Array(SPOOL_WRITE_SIZE);
        let at = 0;
        for (const part of parts) {
          writeSync(fd, part, 0, part.length, at);
          at += part.length;
        }
        parts.length = 0;
      };
      try {
        if (size !== undefined && size > memoryLimit) toFile();
        for await (const chunk of chunks) {
          if (size !== undefined && total + chunk.length > size) throw tooLarge(name, size);
          if (file === undefined && total + chunk.length > memoryLimit) toFile();
          if (file !== undefined) {
            // Pipe chunks are 64 KiB: gathered into 1 MiB writes, sixteen times fewer system calls.
            if (staged + chunk.length > stage.length) {
              writeSync(file.fd, stage, 0, staged, total - staged);
              staged = 0;
            }
            if (chunk.length >= stage.length) writeSync(file.fd, chunk, 0, chunk.length, total);
            else {
              stage.set(chunk, staged);
              staged += chunk.length;
            }
          } else parts.push(chunk.slice());
          total += chunk.length;
        }
        if (file !== undefined && staged > 0) writeSync(file.fd, stage, 0, staged, total - staged);
      } catch (e) {
        if (file !== undefined) {
          closeSync(file.fd);
          rmSync(file.dir, { recursive: true, force: true });
        }
        throw e;
      }
      if (file !== undefined) return fileMember(file.dir, file.fd, total);
      return { source: bytesSource(concatBytes(parts)), where: "memory", close() {} };
    },
  };
}
