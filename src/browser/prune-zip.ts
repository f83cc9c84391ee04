/**
 * `offload-kit prune --keep=GPU x.whl -o out.whl` in the inspector page's worker: a wheel or other zip written
 * as the CLI writes it (src/packages/node/edit-zip.ts), byte for byte. Each member with device code (the
 * walk's rule: something located, or damage where offload code is) is inflated (DecompressionStream),
 * pruned (src/prune/index.ts planPrune, the CLI's planner) and deflated again with CompressionStream
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
import type { Codecs } from "../compress/codecs.js";
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { locate } from "../inspect/locate.js";
import type { Location } from "../inspect/locate.js";
import { crc32 } from "../inspector/zip.js";
import { rewriteRecord } from "../packages/write/record.js";
import { rewriteZip } from "../packages/write/zip.js";
import type { ReplacedMember, ZipRewriteSink } from "../packages/write/zip.js";
import { isZip, readZip, zipDataOffset } from "../packages/zip.js";
import type { ZipMember } from "../packages/zip.js";
import { planPrune } from "../prune/index.js";
import type { PlannedPrune } from "../prune/index.js";
import { materialize } from "../prune/plan.js";
import { parseSelection, selectionText } from "../prune/select.js";
import type { PruneReply, PrunedPart } from "./protocol.js";

const RECORD = /^[^/]+\.dist-info\/RECORD$/;
/** What a plan that meets no editable content throws, in a package: the member is left as it is (as the CLI leaves it). */
const NOT_EDITABLE = new Set(["NO_OFFLOAD_CONTENT", "NO_HIP_FATBIN", "ELF_UNSUPPORTED"]);

/** Whether the page can write `source` back as a package of its kind: a zip (a wheel, a plain zip). */
export function isZipPackage(source: ByteSource): boolean {
  return source.size >= 4 && isZip(readExact(source, 0, 4));
}

/** The CLI's rule for a member with device code (src/inspect/node/check.ts holdsOffloadCode, isDamagedOffloadFile). */
function holdsOffloadCode(location: Location): boolean {
  if (location.bundles.length > 0 || location.offloadBinaries.length > 0) return true;
  return location.problems.length > 0 && (location.container !== "other" || location.problems.some((p) => p.offset === 0));
}

async function streamed(bytes: Uint8Array, transform: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const out = await new Response(new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(transform as unknown as ReadableWritablePair<Uint8Array, Uint8Array>)).arrayBuffer();
  return new Uint8Array(out);
}

/** A member's bytes: stored ones as they are, deflated ones inflated (undefined: prune edits no such member). */
async function memberBytes(source: ByteSource, member: ZipMember, name: string): Promise<Uint8Array | undefined> {
  // Folders, empty files, encrypted members and methods not read hold no device code offload-kit can edit.
  if ((member.flags & 1) !== 0 || (member.method !== 0 && member.method !== 8) || member.name.endsWith("/") || member.size === 0) return undefined;
  const start = zipDataOffset(source, member);
  if (member.method === 0) return readExact(source, start, member.size);
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
export async function pruneZipPackage(source: ByteSource, name: string, keep: readonly string[], codecs: Codecs): Promise<PruneReply> {
  const selection = parseSelection("keep", keep);
  const index = readZip(source);
  const edits: { position: number; planned: PlannedPrune; output?: Uint8Array }[] = [];
  for (let i = 0; i < index.members.length; i++) {
    const member = index.members[i]!;
    const memberName = `${name}!${member.name}`;
    const bytes = await memberBytes(source, member, memberName);
    if (bytes === undefined) continue;
    const held = bytesSource(bytes);
    if (!holdsOffloadCode(locate(held))) continue;
    let planned: PlannedPrune;
    try {
      planned = planPrune(held, { selection, codecs, name: memberName });
    } catch (e) {
      if (!(e instanceof OffloadKitError) || !NOT_EDITABLE.has(e.code)) throw e;
      continue;
    }
    edits.push({ position: i, planned, ...(planned.plan !== undefined ? { output: materialize(planned.plan, held, codecs) } : {}) });
  }
  // As the CLI's check: a selection that matches no entry of any member is an error, nothing written.
  const matched = new Set(edits.flatMap((e) => e.planned.entries.flatMap((o) => o.matched)));
  if (edits.length > 0 && selection.gpus.every((g) => !matched.has(g.text))) {
    const what = edits.length === 1 ? `${name}!${index.members[edits[0]!.position]!.name}` : `any of the ${edits.length} inputs`;
    throw new OffloadKitError("SELECTION_MATCHES_NOTHING", `${selectionText(selection)} matches no entry in ${what}; nothing was written`, { field: "--keep" });
  }
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
    if (bytes !== undefined) replaced.set(recordAt, await deflated(new TextEncoder().encode(rewriteRecord(new TextDecoder().decode(bytes), changed))));
  }
  const parts: PrunedPart[] = [];
  let position = 0;
  const sink: ZipRewriteSink = {
    get position() {
      return position;
    },
    write(bytes) {
      parts.push({ bytes: bytes.slice() });
      position += bytes.length;
    },
    copy(offset, length) {
      parts.push({ offset, size: length });
      position += length;
    },
  };
  if (replaced.size === 0) sink.copy(0, source.size);
  else rewriteZip(source, index, replaced, sink);
  const entries = edits.flatMap((e) => e.planned.entries);
  return {
    container: "zip package", changed: replaced.size > 0, parts, outputSize: position,
    kept: entries.filter((o) => o.kept).length, entries: entries.length, notes: edits.flatMap((e) => e.planned.notes),
  };
}
