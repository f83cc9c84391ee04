import { RECORDS, R_AUX0, R_AUX1, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS, getResult, reserveWindow } from "../layout";
import { walkOffloadBinaries } from "../offload-binary";
import { Status } from "../status";

/**
 * Writes the spec's worked example: a v1 binary of 0x98 bytes (IMG_Object, OFK_OpenMP, arch=gfx906,
 * triple=amdgcn-amd-amdhsa, image "IMG1"), as clang-offload-packager 19 does. Returns its size.
 */
function writeExample(base: usize): u32 {
  memory.fill(base, 0, 0x98);
  store<u32>(base, 0xad10ff10);
  store<u32>(base + 4, 1);
  store<u64>(base + 8, 0x98);
  store<u64>(base + 16, 32);
  store<u64>(base + 24, 40);
  store<u16>(base + 32, 1);
  store<u16>(base + 34, 1);
  store<u64>(base + 40, 0x48);
  store<u64>(base + 48, 2);
  store<u64>(base + 56, 0x90);
  store<u64>(base + 64, 4);
  store<u64>(base + 0x48, 0x69);
  store<u64>(base + 0x50, 0x87);
  store<u64>(base + 0x58, 0x6e);
  store<u64>(base + 0x60, 0x75);
  memory.copy(base + 0x68, changetype<usize>(String.UTF8.encode("\0arch\0triple\0amdgcn-amd-amdhsa\0gfx906\0")), 39);
  memory.copy(base + 0x90, changetype<usize>(String.UTF8.encode("IMG1")), 4);
  return 0x98;
}

function rec(i: i32, field: i32): f64 {
  return load<f64>(RECORDS + <usize>(i * 10 + field) * 8);
}

describe("offload binary walk", () => {
  test("emits the binary, its entry and both strings", () => {
    const base = reserveWindow(4096);
    const size = writeExample(base);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.DONE);
    expect(getResult(R_COUNT)).toBe(4);
    expect(rec(0, 0)).toBe(1);
    expect(rec(0, 3)).toBe(0x98);
    expect(rec(1, 0)).toBe(2);
    expect(rec(1, 2)).toBe(1);
    expect(rec(1, 7)).toBe(0x90);
    expect(rec(1, 8)).toBe(4);
    expect(rec(2, 2)).toBe(0x69);
    expect(rec(2, 3)).toBe(4);
    expect(rec(2, 4)).toBe(0x87);
    expect(rec(2, 5)).toBe(6);
    expect(rec(3, 3)).toBe(6);
    expect(rec(3, 5)).toBe(17);
    expect(getResult(R_NEXT_POS)).toBe(0x98);
  });

  test("resumes after a full record area, and asks for a window where the bytes are", () => {
    const base = reserveWindow(4096);
    const size = writeExample(base);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 2, 3)).toBe(Status.MORE);
    expect(getResult(R_NEXT_INDEX)).toBe(0);
    expect(getResult(R_AUX0)).toBe(0);
    expect(getResult(R_AUX1)).toBe(-1);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, 0, 0, 100, 3)).toBe(Status.DONE);
    expect(getResult(R_COUNT)).toBe(2);
    // A window starting past the header cannot serve the step: MORE, from the binary's start.
    expect(walkOffloadBinaries(64, size - 64, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.MORE);
    expect(getResult(R_AUX1)).toBe(0);
  });

  test("validates in LLVM's order and names the failing field", () => {
    const base = reserveWindow(4096);
    const size = writeExample(base);
    store<u32>(base + 4, 2);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 1)).toBe(Status.OFFLOAD_BAD_VERSION);
    store<u32>(base + 4, 9);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_BAD_VERSION);
    expect(getResult(R_ERROR_POS)).toBe(4);
    store<u32>(base + 4, 1);
    store<u64>(base + 64, 9);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_IMAGE_OUT_OF_BOUNDS);
    expect(getResult(R_ERROR_POS)).toBe(64);
    store<u64>(base + 64, 4);
    store<u64>(base + 0x50, 0x99);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_VALUE_OUT_OF_BOUNDS);
    store<u64>(base + 0x50, 0xffffffffffffffff);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_VALUE_OUT_OF_BOUNDS);
    store<u64>(base + 8, 0x99);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_SIZE_OUT_OF_BOUNDS);
    store<u8>(base, 0x11);
    expect(walkOffloadBinaries(0, size, <f64>size, 0, -1, -1, 100, 3)).toBe(Status.OFFLOAD_BAD_MAGIC);
  });
});
