/**
 * `offload-kit prune --keep=GPU x.whl -o out.whl` in the inspector page's worker: a wheel or other zip written
 * as the CLI writes it (src/packages/node/edit-zip.ts), byte for byte. Each member with device code (the
 * walk's rule: something located, or damage where offload code is) is inflated (DecompressionStream),
 * pruned (./members.ts: the CLI's rule and planner) and deflated again with CompressionStream
 * ("deflate-raw": zlib at its default level 6, the level the CLI and Python's zipfile use; Chromium and
 * Node carry the same zlib, so the bytes agree: tested against the CLI); every other member is copied as its
 * stored bytes (src/packages/write/zip.ts rewriteZip) and a wheel's RECORD gets the new sha256 and sizes
 * (src/packages/write/record.ts).
 *
 * The answer is the output's parts, as a single file's prune answers (src/browser/protocol.ts PrunedPart):
 * every member copied is a range of the File, which the page slices (nothing of it is read here beyond the
 * zip's directory and headers); the edited members, the new headers and directory are bytes made here. The
 * members with device code are held here one at a time, inflated, with their output.
 */
import { OffloadKitError } from "../../engine/errors.js";
import { readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { crc32 } from "../../inspector/zip.js";
import { rewriteRecordBytes } from "../../packages/write/record.js";
import { rewriteZip } from "../../packages/write/zip.js";
import type { ReplacedMember, ZipRewriteSink } from "../../packages/write/zip.js";
import { isZip, readZip, zipDataOffset } from "../../packages/zip.js";
import type { ZipMember } from "../../packages/zip.js";
import type { PrunedPart } from "../protocol.js";
import { packageEdit, pruneMember } from "./members.js";
import type { MemberEdit, PackageEdit, PruneScope } from "./members.js";

const RECORD = /^[^/]+\.dist-info\/RECORD$/;

/** Whether `source` is a zip (a wheel, a plain zip; a .conda is one too, written by ./conda.ts). */
export function isZipPackage(source: ByteSource): boolean {
  return source.size >= 4 && isZip(readExact(source, 0, 4));
}

async function streamed(bytes: Uint8Array, transform: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const out = await new Response(new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(transform as unknown as ReadableWritablePair<Uint8Array, Uint8Array>)).arrayBuffer();
  return new Uint8Array(out);
}

/** A member's bytes: stored ones as they are, deflated ones inflated (undefined: prune edits no such member). */
async function memberBytes(source: ByteSource, member: ZipMember, name: string): Promise<Uint8Array | undefined> {
  // Folders, empty files, symbolic links (their bytes name the target; the walker never follows them, so the
  // inspector lists no device code there), encrypted members and methods not read hold no device code offload-kit can edit.
  if ((member.flags & 1) !== 0 || (member.method !== 0 && member.method !== 8) || member.name.endsWith("/") || member.size === 0 || (member.mode & 0o170000) === 0o120000) return undefined;
  const start = zipDataOffset(source, member);
  if (member.method === 0) {
    // As the walker: a stored member's two sizes must agree (else the bytes read are not the member's).
    if (member.compressedSize !== member.size) throw new OffloadKitError("ZIP_BAD_SIZE", `${name}: stored with ${member.compressedSize} bytes but declares ${member.size}`, { offset: member.localOffset, field: "compressed size" });
    return readExact(source, start, member.size);
  }
  let bytes: Uint8Array;
  try {
    bytes = await streamed(readExact(source, start, member.compressedSize), new DecompressionStream("deflate-raw"));
  } catch (e) {
    throw new OffloadKitError("DECODE_FAILED", `${name}: deflate data is corrupt or cut short (${e instanceof Error ? e.message : String(e)})`, { offset: member.localOffset });
  }
  if (bytes.length !== member.size) throw new OffloadKitError("ZIP_BAD_SIZE", `${name}: inflates to ${bytes.length} bytes, not the declared ${member.size}`, { offset: member.localOffset });
  return bytes;
}

/** sha256 as RECORD writes it: urlsafe base64 without padding. */
async function recordHash(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function deflated(data: Uint8Array): Promise<ReplacedMember & { readonly bytes: Uint8Array }> {
  const bytes = await streamed(data, new CompressionStream("deflate-raw"));
  return { crc32: crc32(data), size: data.length, compressedSize: bytes.length, bytes, write: (sink) => sink.write(bytes) };
}

/**
 * The zip `source` (named `name`, as the CLI's messages name the input) pruned to what `keep` loads, as the
 * output's parts; `changed` false (the input as it is) when no member changes.
 */
/**
 * A zip writer's sink (src/packages/write/zip.ts) that keeps the output as parts: what is copied is a range of
 * the File (never read here), what is written is bytes as given (the writer makes each header and record anew and
 * never reuses them; the worker transfers each buffer once however many parts view it). Not copied, so a
 * conda package's encoded tars are not held twice.
 */
export function partsSink(): { readonly parts: PrunedPart[]; readonly sink: ZipRewriteSink } {
  const parts: PrunedPart[] = [];
  let position = 0;
  const sink: ZipRewriteSink = {
    get position() {
      return position;
    },
    write(bytes) {
      parts.push({ bytes });
      position += bytes.length;
    },
    copy(offset, length) {
      parts.push({ offset, size: length });
      position += length;
    },
  };
  return { parts, sink };
}

export async function pruneZipPackage(source: ByteSource, name: string, scope: PruneScope): Promise<PackageEdit> {
  const index = readZip(source);
  const edits: (MemberEdit & { position: number })[] = [];
  for (let i = 0; i < index.members.length; i++) {
    const member = index.members[i]!;
    const memberName = `${name}!${member.name}`;
    const bytes = await memberBytes(source, member, memberName);
    if (bytes === undefined) continue;
    const edit = await pruneMember(bytes, memberName, scope);
    if (edit !== undefined) edits.push({ ...edit, position: i });
  }
  scope.check(edits);
  const replaced = new Map<number, ReplacedMember>();
  const changed = new Map<string, { sha256: string; size: number }>();
  for (const edit of edits) {
    if (edit.output === undefined) continue;
    replaced.set(edit.position, await deflated(edit.output));
    changed.set(index.members[edit.position]!.name, { sha256: await recordHash(edit.output), size: edit.output.length });
  }
  const recordAt = index.members.findIndex((m) => RECORD.test(m.name));
  if (recordAt >= 0 && changed.size > 0) {
    const member = index.members[recordAt]!;
    const bytes = await memberBytes(source, member, `${name}!${member.name}`);
    if (bytes !== undefined) replaced.set(recordAt, await deflated(rewriteRecordBytes(bytes, changed)));
  }
  const { parts, sink } = partsSink();
  if (replaced.size === 0) sink.copy(0, source.size);
  else rewriteZip(source, index, replaced, sink);
  return packageEdit("zip package", edits, replaced.size > 0, parts);
}
