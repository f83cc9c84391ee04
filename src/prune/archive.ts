/**
 * Archives (`!<arch>`): `-type=a` bundles (each member a bundle file) and `.a` of fat objects. Each
 * member is pruned by the container rules for what it is (the caller's `editMember`, the dispatch in
 * ./containers.ts); members holding no bundles stay as they are. When any member changed, the archive is
 * written again the way LLVM's archive writer does for clang-offload-bundler and `llvm-ar rcD`
 * (src/formats/archive.ts: GNU format, deterministic headers, `//` name table, the symbol table rebuilt
 * from every member's symbols by src/formats/symbols.ts). Member names are kept as stored. An archive
 * where nothing changes is returned as it is. Thin archives (members in other files) are refused.
 */
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource } from "../engine/source.js";
import { memberData, readArchive, writeArchive } from "../formats/archive.js";
import type { PackedSymbols } from "../formats/archive.js";
import { archiveMemberSymbols } from "../formats/symbols.js";

export { isArchive } from "../formats/archive.js";

/** Changes one member (`where` names it for messages); returns the same array when it keeps it as it is. */
export type MemberEditor = (data: Uint8Array, where: string) => Uint8Array;

function symbolsOf(data: Uint8Array, name: string): PackedSymbols | null {
  const symbols = archiveMemberSymbols(bytesSource(data));
  if (symbols.kind === "unreadable") {
    throw new OffloadKitError("AR_MEMBER_UNREADABLE", `member '${name}': ${symbols.message}`, { field: "member" });
  }
  return symbols.kind === "symbols" ? symbols.symbols : null;
}

export function editArchive(bytes: Uint8Array, place: string, editMember: MemberEditor): Uint8Array {
  const index = readArchive(bytes);
  if (index.thin) {
    throw new OffloadKitError("THIN_ARCHIVE", `${place}: a thin archive's members are other files; prune those files instead`, { offset: 0, field: "magic" });
  }
  let changed = false;
  const members = index.members.map((member) => {
    const data = memberData(bytes, member);
    const edited = editMember(data, `member ${member.name}`);
    if (edited !== data) changed = true;
    return { name: member.name, data: edited };
  });
  if (!changed) return bytes;
  return writeArchive(members.map((m) => ({ ...m, symbols: symbolsOf(m.data, m.name) })));
}
