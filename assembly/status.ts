/**
 * Status codes returned by every kernel, in one table.
 *
 * Mirrored by src/engine/status.ts; test/engine/abi.test.ts reads this file and checks the mirror.
 * Non-negative codes are progress, negative codes are validation failures of the input (never bugs:
 * broken invariants use `abort`). Ranges: -1..-49 binary bundles, -50..-99 text and scan,
 * -100..-149 archives, -150..-199 offload binaries.
 */
export enum Status {
  /** The walk reached its end. */
  DONE = 0,
  /** The window or the record area is exhausted: call again from R_NEXT_POS. */
  MORE = 1,
  /** The input does not start with the format's magic (or is shorter than it). */
  NOT_FOUND = 2,

  /** Binary bundle: the 8-byte entry count runs past the end of the input. */
  BUNDLE_COUNT_TRUNCATED = -1,
  /** Binary bundle: an entry's offset field runs past the end. */
  BUNDLE_OFFSET_TRUNCATED = -2,
  /** Binary bundle: an entry's size field runs past the end. */
  BUNDLE_SIZE_TRUNCATED = -3,
  /** Binary bundle: an entry's ID-length field runs past the end. */
  BUNDLE_ID_LENGTH_TRUNCATED = -4,
  /** Binary bundle: an entry's ID bytes run past the end. */
  BUNDLE_ID_TRUNCATED = -5,
  /** Binary bundle: an entry's payload offset is 0. */
  BUNDLE_OFFSET_ZERO = -6,
  /** Binary bundle: an entry's payload (offset + size) runs past the end. */
  BUNDLE_PAYLOAD_OUT_OF_BOUNDS = -7,
  /** Binary bundle: an entry's ID is longer than the window (not supported). */
  BUNDLE_ID_TOO_LONG = -8,
}
