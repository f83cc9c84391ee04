// The .nv.info record parser (src/formats/nv-cubin-info.ts): each record format, and the typed errors with the
// offset and field of the bytes at fault. The values themselves are judged against cuobjdump in
// test/kernels/nv-resources.test.ts.
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { EIATTR_REGCOUNT, eiattrName, functionValue, parseNvInfo } from "../../src/formats/nv-cubin-info.js";

function thrown(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    if (e instanceof OffloadKitError) return e;
    throw e;
  }
  throw new Error("did not throw");
}

describe(".nv.info records", () => {
  it("reads every format; per-function payloads give symbol and value", () => {
    const bytes = Uint8Array.of(
      0x04, 0x2f, 0x08, 0x00, 0x0b, 0, 0, 0, 0x20, 0, 0, 0, // EIFMT_SVAL EIATTR_REGCOUNT {sym 11, 32}
      0x03, 0x1b, 0xff, 0x00, // EIFMT_HVAL EIATTR_MAXREG_COUNT 255
      0x01, 0x35, 0x00, 0x00, // EIFMT_NVAL EIATTR_SW2861232_WAR
      0x02, 0x4c, 0x01, 0x00, // EIFMT_BVAL EIATTR_NUM_BARRIERS 1
      0x04, 0x99, 0x00, 0x00, // an unnamed attribute with an empty payload
    );
    const records = parseNvInfo(bytes, 0x100);
    expect(records.map((r) => [r.offset, r.format, r.name, r.value])).toEqual([
      [0x100, 4, "EIATTR_REGCOUNT", undefined], [0x10c, 3, "EIATTR_MAXREG_COUNT", 255], [0x110, 1, "EIATTR_SW2861232_WAR", 0],
      [0x114, 2, "EIATTR_NUM_BARRIERS", 1], [0x118, 4, "EIATTR_0x99", undefined],
    ]);
    expect(records[0]!.attribute).toBe(EIATTR_REGCOUNT);
    expect(functionValue(records[0]!)).toEqual({ symbol: 11, value: 32 });
    expect(functionValue(records[4]!)).toBeUndefined();
    expect(eiattrName(0x12)).toBe("EIATTR_MIN_STACK_SIZE");
  });

  it("a payload past the section, a cut header and an unknown format are typed errors at their bytes", () => {
    const past = thrown(() => parseNvInfo(Uint8Array.of(0x04, 0x2f, 0x09, 0x00, 1, 2, 3, 4, 5, 6, 7, 8), 0x40));
    expect([past.code, past.offset, past.field]).toEqual(["NV_INFO_TRUNCATED", 0x42, "size"]);
    const cut = thrown(() => parseNvInfo(Uint8Array.of(0x03, 0x1b, 0xff, 0x00, 0x04, 0x2f), 0x40));
    expect([cut.code, cut.offset, cut.field]).toEqual(["NV_INFO_TRUNCATED", 0x44, "record"]);
    const format = thrown(() => parseNvInfo(Uint8Array.of(0x03, 0x1b, 0xff, 0x00, 0x07, 0x2f, 0, 0)));
    expect([format.code, format.offset, format.field]).toEqual(["NV_INFO_FORMAT", 4, "format"]);
    expect(parseNvInfo(new Uint8Array(0))).toEqual([]);
  });
});
