/**
 * Mirror of assembly/layout.ts: the fixed regions both engines share. The TypeScript twin lays out its
 * own ArrayBuffer the same way, so record-reading code is written once for both engines.
 * test/engine/abi.test.ts parses the AssemblyScript file and checks every constant below.
 */

export const ABI_VERSION = 1;

export const RESULT = 0x100;
export const RESULT_SLOTS = 16;
export const NEEDLE = 0x200;
export const NEEDLE_MAX = 256;
export const RECORDS = 0x400;
export const RECORDS_BYTES = 0x10000 - 0x400;

export const R_STATUS = 0;
export const R_COUNT = 1;
export const R_NEXT_POS = 2;
export const R_NEXT_INDEX = 3;
export const R_ERROR_POS = 4;
export const R_AUX0 = 5;
export const R_AUX1 = 6;
export const R_AUX2 = 7;

/** Where the TS twin puts its window (the Wasm engine's window sits above its heap base instead). */
export const TS_WINDOW_BASE = 0x10000;

/** Bundle walk records: four f64 per entry (ID position, ID length, payload offset, payload size). */
export const BUNDLE_RECORD_F64S = 4;
export const BUNDLE_MAX_RECORDS = Math.floor(RECORDS_BYTES / (BUNDLE_RECORD_F64S * 8));
/** Offload binary walk records (assembly/offload-binary.ts): ten f64 each, the first one the record type. */
export const OFFLOAD_RECORD_F64S = 10;
export const OFFLOAD_MAX_RECORDS = Math.floor(RECORDS_BYTES / (OFFLOAD_RECORD_F64S * 8));
export const OFFLOAD_RECORD_BINARY = 1;
export const OFFLOAD_RECORD_ENTRY = 2;
export const OFFLOAD_RECORD_STRING = 3;
/** Scan hits: one u32 window position each. */
export const SCAN_MAX_HITS = RECORDS_BYTES >>> 2;

/** Archive member walk records (assembly/ar.ts): eight f64 per member. */
export const AR_RECORD_F64S = 8;
export const AR_MAX_RECORDS = Math.floor(RECORDS_BYTES / (AR_RECORD_F64S * 8));
/** archiveHead's R_AUX0: which magic the file starts with. */
export const AR_KIND_REGULAR = 1;
export const AR_KIND_THIN = 2;
export const AR_KIND_BIG = 3;
/** walkArchive flags: a thin archive; BSD-like name rules. */
export const AR_WALK_THIN = 1;
export const AR_WALK_BSD = 2;
/** Name kinds in archive records. */
export const AR_NAME_PLAIN = 0;
export const AR_NAME_SYMTAB = 1;
export const AR_NAME_SYMTAB64 = 2;
export const AR_NAME_STRTAB = 3;
export const AR_NAME_GNU_LONG = 4;
export const AR_NAME_BSD_LONG = 5;
export const AR_NAME_SPECIAL = 6;
