// walkTar over a stream: what a header declares is not what the reader allocates. A pax header (or GNU long
// name) may declare up to 1 MiB; in a stream that ends after 2 KiB, the reader must not make a 1 MiB buffer
// before the bytes arrive (the allocation watch of the fuzz campaign measures every buffer made).
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { ChunkReader } from "../../src/packages/chunks.js";
import { walkTar } from "../../src/packages/tar.js";
import { beginWatch, endWatch, installAllocationWatch } from "../fuzz/campaign/alloc.js";
import { tarEntry } from "./build.js";

describe("tar as a stream", () => {
  it("a pax header declaring 1 MiB in a 2 KiB stream: a truncation, and no buffer larger than what arrived", async () => {
    installAllocationWatch();
    for (const type of ["x", "L"]) {
      const stream = Buffer.concat([tarEntry("PaxHeaders/x", Buffer.from("30 path=a/very/long/name/x.so\n"), { type, size: 1000000 }), Buffer.alloc(1024, 0x41)]);
      const reader = ChunkReader.ofStream((async function* () {
        yield Uint8Array.from(stream);
      })());
      let error: unknown;
      beginWatch();
      try {
        for await (const entry of walkTar(reader)) void entry;
      } catch (e) {
        error = e;
      }
      const largest = endWatch();
      expect(error, type).toBeInstanceOf(OffloadKitError);
      expect((error as OffloadKitError).code, type).toBe("PACKAGE_TRUNCATED");
      expect(largest, type).toBeLessThanOrEqual(stream.length);
    }
  });
});
