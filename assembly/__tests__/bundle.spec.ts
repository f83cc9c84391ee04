import { RECORDS, R_AUX0, R_COUNT, R_ERROR_POS, R_NEXT_POS, getResult, reserveWindow } from "../layout";
import { BUNDLE_RECORD_F64S, bundleHead, walkBundle } from "../bundle";
import { Status } from "../status";

function putU64(at: usize, value: u64): void {
  store<u64>(at, value);
}

/** Writes a two-entry bundle (IDs "host-", "dev"; 88-byte header) with payloads "HOST" and "DEV"; returns its size. */
function writeBundle(base: usize): u32 {
  memory.copy(base, changetype<usize>(String.UTF8.encode("__CLANG_OFFLOAD_BUNDLE__")), 24);
  putU64(base + 24, 2);
  putU64(base + 32, 88);
  putU64(base + 40, 4);
  putU64(base + 48, 5);
  memory.copy(base + 56, changetype<usize>(String.UTF8.encode("host-")), 5);
  putU64(base + 61, 92);
  putU64(base + 69, 3);
  putU64(base + 77, 3);
  memory.copy(base + 85, changetype<usize>(String.UTF8.encode("dev")), 3);
  memory.copy(base + 88, changetype<usize>(String.UTF8.encode("HOSTDEV")), 7);
  return 95;
}

function rec(i: i32, field: i32): f64 {
  return load<f64>(RECORDS + <usize>(i * BUNDLE_RECORD_F64S + field) * 8);
}

describe("bundle header walk", () => {
  test("reads the magic, the count and every entry", () => {
    const base = reserveWindow(4096);
    const size = writeBundle(base);
    expect(bundleHead(size, <f64>size)).toBe(Status.DONE);
    expect(getResult(R_AUX0)).toBe(2);
    expect(walkBundle(0, size, <f64>size, 32, 0, 2, 100)).toBe(Status.DONE);
    expect(getResult(R_COUNT)).toBe(2);
    expect(rec(0, 0)).toBe(56);
    expect(rec(0, 1)).toBe(5);
    expect(rec(0, 2)).toBe(88);
    expect(rec(1, 2)).toBe(92);
    expect(rec(1, 3)).toBe(3);
  });

  test("reports the failing field and resumes across windows", () => {
    const base = reserveWindow(4096);
    const size = writeBundle(base);
    // A window that ends inside entry 1 asks for more.
    expect(walkBundle(0, 70, <f64>size, 32, 0, 2, 100)).toBe(Status.MORE);
    expect(getResult(R_NEXT_POS)).toBe(61);
    // The payload of entry 1 ends past a shortened input.
    expect(walkBundle(0, size - 1, <f64>(size - 1), 32, 0, 2, 100)).toBe(Status.BUNDLE_PAYLOAD_OUT_OF_BOUNDS);
    expect(getResult(R_ERROR_POS)).toBe(61);
    // A hostile count near 2^64 must not trap.
    expect(walkBundle(0, size, <f64>size, 32, 0, 1.8446744073709552e19, 100)).toBe(Status.BUNDLE_OFFSET_TRUNCATED);
  });

  test("says NOT_FOUND without the magic", () => {
    const base = reserveWindow(4096);
    store<u8>(base, 0x41);
    expect(bundleHead(100, 100)).toBe(Status.NOT_FOUND);
  });
});
