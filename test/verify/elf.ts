// Small, independent ELF64 readers and writers for the verify tests: they find the field a mutation
// changes, by the gABI layout, without the code under test.
import { existsSync, readFileSync } from "node:fs";
import { bytesSource } from "../../src/engine/source.js";
import { verifySource } from "../../src/verify/index.js";
import type { VerifyOptions } from "../../src/verify/index.js";

export const required = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";

/** The file's bytes, or undefined where it is not installed (an error under OFFLOAD_KIT_REQUIRE_NATIVE=1). */
export function installed(path: string): Uint8Array | undefined {
  if (existsSync(path)) return new Uint8Array(readFileSync(path));
  if (required) throw new Error(`${path} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
  return undefined;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function getU64(bytes: Uint8Array, at: number): number {
  return Number(view(bytes).getBigUint64(at, true));
}

export function setU64(bytes: Uint8Array, at: number, value: number): void {
  view(bytes).setBigUint64(at, BigInt(value), true);
}

export function setU16(bytes: Uint8Array, at: number, value: number): void {
  view(bytes).setUint16(at, value, true);
}

export function setU32(bytes: Uint8Array, at: number, value: number): void {
  view(bytes).setUint32(at, value, true);
}

export interface Phdr { at: number; type: number; flags: number; offset: number; vaddr: number; filesz: number; memsz: number }
export interface Shdr { at: number; name: string; type: number; addr: number; offset: number; size: number }

export function phdrs(bytes: Uint8Array): Phdr[] {
  const v = view(bytes);
  const phoff = getU64(bytes, 32);
  return Array.from({ length: v.getUint16(56, true) }, (_, i) => {
    const at = phoff + i * 56;
    return { at, type: v.getUint32(at, true), flags: v.getUint32(at + 4, true), offset: getU64(bytes, at + 8), vaddr: getU64(bytes, at + 16), filesz: getU64(bytes, at + 32), memsz: getU64(bytes, at + 40) };
  });
}

export function shdrs(bytes: Uint8Array): Shdr[] {
  const v = view(bytes);
  const shoff = getU64(bytes, 40);
  const count = v.getUint16(60, true);
  const strtab = getU64(bytes, shoff + v.getUint16(62, true) * 64 + 24);
  return Array.from({ length: count }, (_, i) => {
    const at = shoff + i * 64;
    let name = "";
    for (let p = strtab + v.getUint32(at, true); bytes[p] !== 0; p++) name += String.fromCharCode(bytes[p]);
    return { at, name, type: v.getUint32(at + 4, true), addr: getU64(bytes, at + 16), offset: getU64(bytes, at + 24), size: getU64(bytes, at + 32) };
  });
}

export function section(bytes: Uint8Array, name: string): Shdr {
  const found = shdrs(bytes).find((s) => s.name === name);
  if (found === undefined) throw new Error(`no section ${name}`);
  return found;
}

/** The file offset of the dynamic entry with `tag` (its d_tag field). */
export function dynamicEntry(bytes: Uint8Array, tag: number): number {
  const dynamic = phdrs(bytes).find((p) => p.type === 2)!;
  for (let at = dynamic.offset; at < dynamic.offset + dynamic.filesz; at += 16) if (getU64(bytes, at) === tag) return at;
  throw new Error(`no dynamic tag ${tag}`);
}

/** The codes of every finding, and the full report for messages. */
export function codes(bytes: Uint8Array, options: VerifyOptions = {}): string[] {
  return verifySource(bytesSource(bytes), options).findings.map((f) => f.code);
}

export function mutated(bytes: Uint8Array, change: (copy: Uint8Array) => void): Uint8Array {
  const copy = bytes.slice();
  change(copy);
  return copy;
}
