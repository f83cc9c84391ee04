/**
 * bzip2's CRC-32: the polynomial 0x04c11db7 fed most significant bit first (not zlib's reflected CRC), for
 * each block's CRC and the stream's combined one; one table for the decoder (src/packages/bzip2.ts) and the
 * encoder (./bzip2-encode.ts).
 */
export const BZIP2_CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c;
  }
  return table;
})();
