/**
 * Byte-level helpers shared by the format modules. Bundle IDs and other names read from files are
 * kept as *byte strings*: one JS char per byte (latin1), so any byte sequence round-trips exactly and
 * is written back unchanged, the way LLVM treats them (StringRef, no encoding).
 */

export function latin1Decode(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x2000) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x2000) as unknown as number[]);
  }
  return out;
}

export function latin1Encode(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) throw new TypeError(`not a byte string: char ${code} at ${i}`);
    out[i] = code;
  }
  return out;
}

const utf8 = new TextEncoder();

/** The byte string of a Unicode string's UTF-8 encoding (command-line arguments arrive as Unicode). */
export function utf8ToByteString(text: string): string {
  return latin1Decode(utf8.encode(text));
}

/** The Unicode reading of a byte string, for display (invalid UTF-8 becomes U+FFFD). */
export function byteStringToUnicode(text: string): string {
  return new TextDecoder().decode(latin1Encode(text));
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function startsWith(bytes: Uint8Array, prefix: Uint8Array, at = 0): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** Rounds `value` up to a multiple of `align` (any positive integer, as llvm::alignTo). */
export function alignTo(value: number, align: number): number {
  return Math.ceil(value / align) * align;
}

/** Writes `value` (an exact integer below 2^53) as a little-endian u64. */
export function setU64(view: DataView, at: number, value: number): void {
  view.setUint32(at, value % 4294967296, true);
  view.setUint32(at + 4, Math.floor(value / 4294967296), true);
}
