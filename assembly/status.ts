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

  /** Archive: fewer than 60 bytes remain for the next member header. */
  AR_HEADER_TRUNCATED = -100,
  /** Archive: a member header does not end in "`\n". */
  AR_BAD_TERMINATOR = -101,
  /** Archive (BSD): a member name starts with a space. */
  AR_LEADING_SPACE = -102,
  /** Archive: a member's size field is not all decimal digits. */
  AR_BAD_SIZE = -103,
  /** Archive: a `/<offset>` name whose offset is not all decimal digits. */
  AR_BAD_LONG_NAME = -104,
  /** Archive: a `#1/<length>` name whose length is not all decimal digits. */
  AR_BAD_BSD_NAME_LENGTH = -105,
  /** Archive: a `#1/` name longer than the member. */
  AR_BSD_NAME_PAST_END = -106,
  /** Archive: a member's data runs past the end of the archive. */
  AR_MEMBER_PAST_END = -107,

  /** Offload binary: the 10 FF 10 AD magic is missing where a binary should start. */
  OFFLOAD_BAD_MAGIC = -150,
  /** Offload binary: fewer bytes remain than a header (v1: header and entry, 72 bytes) needs. */
  OFFLOAD_HEADER_TRUNCATED = -151,
  /** Offload binary: version 0, or above 3. */
  OFFLOAD_BAD_VERSION = -152,
  /** Offload binary: the size field exceeds the bytes left, or is below 40. */
  OFFLOAD_SIZE_OUT_OF_BOUNDS = -153,
  /** Offload binary: the entry (v1) or entries (v2+) do not fit in the binary. */
  OFFLOAD_ENTRIES_OUT_OF_BOUNDS = -154,
  /** Offload binary (v3, compressed): entries offset past the size, or inflated size below it. */
  OFFLOAD_COMPRESSED_OUT_OF_BOUNDS = -155,
  /** Offload binary: an entry's image starts or ends past the binary. */
  OFFLOAD_IMAGE_OUT_OF_BOUNDS = -156,
  /** Offload binary: an entry's string-entry array starts or ends past the binary. */
  OFFLOAD_STRINGS_OUT_OF_BOUNDS = -157,
  /** Offload binary: a string entry's key offset is past the binary. */
  OFFLOAD_KEY_OUT_OF_BOUNDS = -158,
  /** Offload binary: a string entry's value offset (or v2+ value size) runs past the binary. */
  OFFLOAD_VALUE_OUT_OF_BOUNDS = -159,
  /** Offload binary: one step's header, entry, string entry and strings span more than the window. */
  OFFLOAD_METADATA_TOO_WIDE = -160,
}
