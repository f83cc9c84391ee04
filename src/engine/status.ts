/**
 * Mirror of assembly/status.ts (test/engine/abi.test.ts keeps the two equal): the status codes every
 * kernel returns, and their names for error values.
 */
export const Status = {
  DONE: 0,
  MORE: 1,
  NOT_FOUND: 2,

  BUNDLE_COUNT_TRUNCATED: -1,
  BUNDLE_OFFSET_TRUNCATED: -2,
  BUNDLE_SIZE_TRUNCATED: -3,
  BUNDLE_ID_LENGTH_TRUNCATED: -4,
  BUNDLE_ID_TRUNCATED: -5,
  BUNDLE_OFFSET_ZERO: -6,
  BUNDLE_PAYLOAD_OUT_OF_BOUNDS: -7,
  BUNDLE_ID_TOO_LONG: -8,

  AR_HEADER_TRUNCATED: -100,
  AR_BAD_TERMINATOR: -101,
  AR_LEADING_SPACE: -102,
  AR_BAD_SIZE: -103,
  AR_BAD_LONG_NAME: -104,
  AR_BAD_BSD_NAME_LENGTH: -105,
  AR_BSD_NAME_PAST_END: -106,
  AR_MEMBER_PAST_END: -107,

  OFFLOAD_BAD_MAGIC: -150,
  OFFLOAD_HEADER_TRUNCATED: -151,
  OFFLOAD_BAD_VERSION: -152,
  OFFLOAD_SIZE_OUT_OF_BOUNDS: -153,
  OFFLOAD_ENTRIES_OUT_OF_BOUNDS: -154,
  OFFLOAD_COMPRESSED_OUT_OF_BOUNDS: -155,
  OFFLOAD_IMAGE_OUT_OF_BOUNDS: -156,
  OFFLOAD_STRINGS_OUT_OF_BOUNDS: -157,
  OFFLOAD_KEY_OUT_OF_BOUNDS: -158,
  OFFLOAD_VALUE_OUT_OF_BOUNDS: -159,
  OFFLOAD_METADATA_TOO_WIDE: -160,
} as const;

export type StatusName = keyof typeof Status;

const NAMES = new Map<number, StatusName>(
  (Object.entries(Status) as [StatusName, number][]).map(([name, code]) => [code, name]),
);

export function statusName(code: number): StatusName | undefined {
  return NAMES.get(code);
}
