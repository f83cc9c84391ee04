// A hand-made version 1 OffloadBinary (0x10FF10AD) for the wrapper tests: llvm-offload-wrapper 22 points an
// OpenMP device image at the first entry's payload.
/** A v1 OffloadBinary with `entries` images (22 points the device image at the first one). */
export function offloadBinary(images: Uint8Array[]): Uint8Array {
  const header = 32;
  const entrySize = 40;
  let at = header + entrySize * images.length;
  const offsets = images.map((image) => {
    at = Math.ceil(at / 8) * 8;
    const offset = at;
    at += image.length;
    return offset;
  });
  const size = Math.ceil(at / 8) * 8;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set([0x10, 0xff, 0x10, 0xad]);
  view.setUint32(4, 1, true);
  view.setBigUint64(8, BigInt(size), true);
  view.setBigUint64(16, BigInt(header), true);
  view.setBigUint64(24, BigInt(entrySize), true);
  images.forEach((image, i) => {
    const e = header + i * entrySize;
    view.setUint16(e, 1, true);
    view.setUint16(e + 2, 1, true);
    view.setBigUint64(e + 8, BigInt(header + entrySize * images.length), true);
    view.setBigUint64(e + 24, BigInt(offsets[i]!), true);
    view.setBigUint64(e + 32, BigInt(image.length), true);
    out.set(image, offsets[i]!);
  });
  return out;
}

