// src/packages/write/tar-entry.ts: a tar entry's headers written again for a new name and size, judged by
// GNU tar and Python's tarfile reading the result (and our own walker): a name that fits a ustar prefix split
// adds no record, one that does not gets a pax `path` record (POSIX headers) or a GNU long name (GNU headers),
// a pax `size` record follows the size and other records are kept byte for byte, a global pax `size` is refused.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { bytesSource } from "../../src/engine/source.js";
import { ChunkReader } from "../../src/packages/chunks.js";
import { walkTar } from "../../src/packages/tar.js";
import { paxRecord, rewriteEntryHeaders } from "../../src/packages/write/tar-entry.js";
import { haveTools } from "./build.js";

const tools = haveTools("python3", "tar");

/** A one-entry tar from Python's tarfile: `name` holding `body`, in `format`, with `pax` records. */
function pythonTar(name: string, body: string, format: "pax" | "gnu" | "ustar", pax: Record<string, string> = {}, global: Record<string, string> = {}): Buffer {
  const script = [
    "import io, json, sys, tarfile",
    "name, body, fmt, pax, glob = sys.argv[1], sys.argv[2].encode(), sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])",
    "f = {'pax': tarfile.PAX_FORMAT, 'gnu': tarfile.GNU_FORMAT, 'ustar': tarfile.USTAR_FORMAT}[fmt]",
    "buf = io.BytesIO()",
    "with tarfile.open(fileobj=buf, mode='w', format=f, pax_headers=glob or None) as t:",
    "  i = tarfile.TarInfo(name); i.size = len(body); i.pax_headers = pax; t.addfile(i, io.BytesIO(body))",
    "sys.stdout.buffer.write(buf.getvalue())",
  ].join("\n");
  return execFileSync("python3", ["-c", script, name, body, format, JSON.stringify(pax), JSON.stringify(global)]);
}

function readBack(tar: Uint8Array): { name: string; size: number; pax: Record<string, string>; body: string }[] {
  const script = "import io,json,sys,tarfile\nt=tarfile.open(fileobj=io.BytesIO(sys.stdin.buffer.read()))\nprint(json.dumps([{'name':m.name,'size':m.size,'pax':m.pax_headers,'body':t.extractfile(m).read().decode()} for m in t.getmembers()]))";
  return JSON.parse(execFileSync("python3", ["-c", script], { input: tar, encoding: "utf8" }));
}

/** The entry's headers in `tar` (everything before its body) and its body's offset. */
async function headersOf(tar: Uint8Array): Promise<{ headers: Uint8Array; dataOffset: number }> {
  for await (const entry of walkTar(ChunkReader.ofSource(bytesSource(tar)))) return { headers: tar.subarray(0, entry.dataOffset), dataOffset: entry.dataOffset };
  throw new Error("no entry");
}

/** `tar` with its only entry given `name` (or kept) and `body`. */
async function rewritten(tar: Uint8Array, name: string | undefined, body: string): Promise<Buffer> {
  const { headers } = await headersOf(tar);
  const bytes = Buffer.from(body);
  const pad = (512 - (bytes.length % 512)) % 512;
  return Buffer.concat([rewriteEntryHeaders(headers, { name, size: bytes.length }, "t"), bytes, Buffer.alloc(pad + 1024)]);
}

const deep = `${"d".repeat(60)}/${"e".repeat(80)}/file.bin`;
const flat = `${"f".repeat(150)}.bin`;

describe.skipIf(!tools)("a tar entry's headers for a new name and size", () => {
  it.each([
    ["ustar", deep, 0],
    ["ustar", flat, 1],
    ["gnu", deep, 1],
    ["gnu", flat, 1],
    ["pax", flat, 1],
  ] as const)("%s header, renamed to a long name (%#): tar and tarfile read the new name and body", async (format, name, records) => {
    const out = await rewritten(pythonTar("a", "old body", format), name, "the new, longer body");
    const listing = execFileSync("tar", ["-t", "-v"], { input: out, encoding: "utf8" });
    expect(listing).toContain(name);
    expect(readBack(out)).toMatchObject([{ name, size: 20, body: "the new, longer body" }]);
    // How many records came before the header: none when the ustar prefix holds it.
    const { dataOffset } = await headersOf(out);
    expect(dataOffset > 512 * (1 + records)).toBe(records > 0);
    for await (const entry of walkTar(ChunkReader.ofSource(bytesSource(out)))) expect([entry.name, entry.size]).toEqual([name, 20]);
  });

  it("a pax size record follows the size; path renamed; every other record kept byte for byte", async () => {
    const tar = pythonTar("lib/x.so", "0123456789", "pax", { size: "10", comment: "keep me", "SCHILY.xattr.user.k": "v" });
    const out = await rewritten(tar, "lib/y.so", "abc");
    const [m] = readBack(out);
    expect(m).toMatchObject({ name: "lib/y.so", size: 3, body: "abc", pax: { size: "3", comment: "keep me", "SCHILY.xattr.user.k": "v" } });
    // The kept records are the input's bytes.
    for (const key of ["comment", "SCHILY.xattr.user.k"]) expect(out.includes(Buffer.from(paxRecord(key, key === "comment" ? "keep me" : "v")))).toBe(true);
  });

  it("a long name in a GNU long-name record is rewritten there; a global pax size is refused", async () => {
    const out = await rewritten(pythonTar(flat, "x", "gnu"), `${flat}.2`, "yz");
    expect(readBack(out)).toMatchObject([{ name: `${flat}.2`, body: "yz" }]);
    const global = pythonTar("a", "x", "pax", {}, { size: "1" });
    await expect(rewritten(global, undefined, "yz")).rejects.toMatchObject({ code: "TAR_UNSUPPORTED" });
  });

  it("paxRecord counts its own length", () => {
    for (const value of ["", "x", "x".repeat(4), "x".repeat(90), "x".repeat(994), "x".repeat(99990)]) {
      const record = new TextDecoder().decode(paxRecord("k", value));
      expect(Number(record.slice(0, record.indexOf(" ")))).toBe(Buffer.byteLength(record));
    }
  });
});
