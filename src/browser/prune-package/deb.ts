/**
 * `offload-kit prune --keep=GPU x.deb -o out.deb` in the page: the .deb written as the CLI writes it
 * (src/packages/node/edit-deb.ts), with the page's encoders. data.tar is decoded once, each regular file with
 * device code pruned in memory (./members.ts), every other tar byte passed on (src/packages/write/tar-stream.ts),
 * and the tar encoded again with its compressor (./encoders.ts) and read back (./tar-output.ts). control.tar
 * keeps every byte but the edited files' `md5sums` lines and `Installed-Size` (src/packages/write/deb.ts, the
 * CLI's code). The ar archive keeps its order and each member's header but for the size; members that do not
 * change (debian-binary, signatures) are ranges of the File, never read.
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { bytesSource } from "../../engine/source.js";
import { concatBytes } from "../../formats/bytes.js";
import { compressionOf } from "../../packages/decoders.js";
import { AR_HEADER, MAX_CONTROL, arHeader, debTars, editControlMember, malformed, md5sumsPath, readDebMembers, replaceTarMembers } from "../../packages/write/deb.js";
import type { EditedFile } from "../../packages/write/deb.js";
import type { PrunedPart } from "../protocol.js";
import { collect, decodedRange } from "./decode.js";
import { tarEncoder } from "./encoders.js";
import { digests, packageEdit, partSize, pruneMember, sameBytes } from "./members.js";
import type { MemberEdit, PackageEdit, PruneScope } from "./members.js";
import { rewriteTar, verifyTar } from "./tar-output.js";

/** Whether `source` is a Debian package (an ar archive whose first member is debian-binary, dpkg's rule). */
export function isDebPackage(source: ByteSource): boolean {
  if (source.size < 8 + AR_HEADER) return false;
  const head = String.fromCharCode(...readExact(source, 0, 8 + 16));
  return head.startsWith("!<arch>\n") && /^debian-binary\/? *$/.test(head.slice(8));
}

/** A small stream (control.tar) encoded again with `method`. */
async function encodeSmall(bytes: Uint8Array, method: ReturnType<typeof compressionOf>, codecs: Codecs, name: string): Promise<Uint8Array[]> {
  const encoder = tarEncoder(method, "deb", codecs, name);
  return [...(await encoder.push(bytes)), ...(await encoder.finish())];
}

export async function pruneDebPackage(source: ByteSource, name: string, scope: PruneScope): Promise<PackageEdit> {
  const { codecs } = scope;
  const members = readDebMembers(source);
  const { controlAt, dataAt } = debTars(members);
  const data = members[dataAt]!;
  const method = compressionOf(readExact(source, data.dataOffset, Math.min(16, data.size)));
  const dataName = `${name}!${data.name}`;

  const edits: MemberEdit[] = [];
  const files: EditedFile[] = [];
  const expected = new Map<number, (body: Uint8Array) => boolean>();
  const tar = await rewriteTar(source, data.dataOffset, data.size, method, "deb", codecs, dataName, async (entry, body, index) => {
    const memberName = `${name}!${entry.name.replace(/^\.\//, "")}`;
    const edit = await pruneMember(await body(), memberName, scope);
    if (edit === undefined) return undefined;
    edits.push(edit);
    if (edit.output === undefined) return undefined;
    const { md5, sha256 } = await digests(edit.output, codecs);
    files.push({ path: md5sumsPath(entry.name), md5, sha256, oldSize: entry.size, newSize: edit.output.length });
    const output = edit.output;
    expected.set(index, (b) => sameBytes(b, output));
    return edit.output;
  });
  scope.check(edits);
  if (files.length === 0) return packageEdit("deb package", edits, false, [{ offset: 0, size: source.size }]);
  await verifyTar(tar, source, method, codecs, dataName, expected);

  // control.tar: the md5sums lines and Installed-Size of the edited files.
  const control = members[controlAt]!;
  const controlName = `${name}!${control.name}`;
  if (control.size > MAX_CONTROL) throw malformed(`control.tar of ${control.size} bytes is larger than ${MAX_CONTROL}`, control.headerOffset, "size");
  const controlMethod = compressionOf(readExact(source, control.dataOffset, Math.min(16, control.size)));
  const controlTar = await collect(decodedRange(source, control.dataOffset, control.size, controlMethod, codecs, controlName), MAX_CONTROL, controlName);
  const sizes: { before?: number; after?: number } = {};
  const edited = await replaceTarMembers(controlTar, (entry, bytes) => editControlMember(entry, bytes, files, sizes));
  const controlChunks = await encodeSmall(edited, controlMethod, codecs, controlName);
  // Read back as the tar it must be (the encoders are ours).
  const back = await collect(decodedRange(bytesSource(concatBytes(controlChunks)), 0, controlChunks.reduce((n, c) => n + c.length, 0), controlMethod, codecs, controlName), MAX_CONTROL, controlName);
  if (!sameBytes(back, edited)) throw new OffloadKitError("VERIFY_FAILED", `${controlName}: the control.tar written does not read back`);

  const replaced = new Map<number, readonly PrunedPart[]>([[controlAt, controlChunks.map((bytes) => ({ bytes }))], [dataAt, tar.parts]]);
  const parts: PrunedPart[] = [{ offset: 0, size: 8 }];
  members.forEach((member, i) => {
    const now = replaced.get(i);
    if (now === undefined) {
      parts.push({ offset: member.headerOffset, size: AR_HEADER + member.size + (member.size % 2) });
      return;
    }
    const size = now.reduce((n, p) => n + partSize(p), 0);
    parts.push({ bytes: arHeader(member.header, size, member.name) }, ...now);
    if (size % 2 === 1) parts.push({ bytes: new Uint8Array([0x0a]) });
  });
  return packageEdit("deb package", edits, true, parts);
}
