import { AR_RECORD_F64S, RECORDS, R_AUX0, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS, getResult, reserveWindow } from "../layout";
import {
  AR_KIND_REGULAR, AR_KIND_THIN, AR_NAME_BSD_LONG, AR_NAME_GNU_LONG, AR_NAME_PLAIN, AR_NAME_STRTAB, AR_NAME_SYMTAB,
  AR_WALK_BSD, AR_WALK_THIN, archiveHead, walkArchive,
} from "../ar";
import { Status } from "../status";

function put(at: usize, text: string): void {
  const bytes = String.UTF8.encode(text);
  memory.copy(at, changetype<usize>(bytes), <usize>bytes.byteLength);
}

/** A 60-byte member header: the name field padded to 16, time/uid/gid/mode, the size field, "`\n". */
function header(at: usize, name: string, size: string): void {
  let text = name;
  while (text.length < 16) text += " ";
  text += "0           0     0     644     ";
  let sizeField = size;
  while (sizeField.length < 10) sizeField += " ";
  put(at, text + sizeField + "`\n");
}

function rec(i: i32, field: i32): f64 {
  return load<f64>(RECORDS + <usize>(i * AR_RECORD_F64S + field) * 8);
}

/**
 * "!<arch>\n", a `//` table holding "long-name.o/\n", "a.o/" with 3 bytes (+ pad), "/0" with 2 bytes.
 * Returns the archive size.
 */
function writeArchive(base: usize): u32 {
  put(base, "!<arch>\n");
  header(base + 8, "//", "14");
  put(base + 68, "long-name.o/\n\n");
  header(base + 82, "a.o/", "3");
  put(base + 142, "abc\n");
  header(base + 146, "/0", "2");
  put(base + 206, "xy");
  return 208;
}

describe("archive member walk", () => {
  test("recognises the magic", () => {
    const base = reserveWindow(4096);
    put(base, "!<arch>\n");
    expect(archiveHead(8, 8)).toBe(Status.DONE);
    expect(getResult(R_AUX0)).toBe(<f64>AR_KIND_REGULAR);
    put(base, "!<thin>\n");
    expect(archiveHead(8, 8)).toBe(Status.DONE);
    expect(getResult(R_AUX0)).toBe(<f64>AR_KIND_THIN);
    put(base, "!<arcX>\n");
    expect(archiveHead(8, 8)).toBe(Status.NOT_FOUND);
    expect(archiveHead(7, 7)).toBe(Status.NOT_FOUND);
  });

  test("walks tables, short names, long names and padding", () => {
    const base = reserveWindow(4096);
    const size = writeArchive(base);
    expect(walkArchive(0, size, <f64>size, 8, 0, 0, 100)).toBe(Status.DONE);
    expect(getResult(R_COUNT)).toBe(3);
    expect(rec(0, 1)).toBe(<f64>AR_NAME_STRTAB);
    expect(rec(0, 4)).toBe(68);
    expect(rec(0, 5)).toBe(14);
    expect(rec(1, 0)).toBe(82);
    expect(rec(1, 1)).toBe(<f64>AR_NAME_PLAIN);
    expect(rec(1, 3)).toBe(3);
    expect(rec(1, 4)).toBe(142);
    expect(rec(2, 0)).toBe(146);
    expect(rec(2, 1)).toBe(<f64>AR_NAME_GNU_LONG);
    expect(rec(2, 3)).toBe(0);
    expect(getResult(R_NEXT_POS)).toBe(208);
    expect(getResult(R_NEXT_INDEX)).toBe(3);
  });

  test("resumes across windows and record limits", () => {
    const base = reserveWindow(4096);
    const size = writeArchive(base);
    expect(walkArchive(0, size, <f64>size, 8, 0, 0, 1)).toBe(Status.MORE);
    expect(getResult(R_NEXT_POS)).toBe(82);
    // A window ending inside the next header asks for more.
    expect(walkArchive(0, 100, <f64>size, 82, 1, 0, 10)).toBe(Status.MORE);
    expect(getResult(R_COUNT)).toBe(0);
    expect(getResult(R_NEXT_POS)).toBe(82);
  });

  test("reports malformed fields at their offsets", () => {
    const base = reserveWindow(4096);
    let size = writeArchive(base);
    store<u8>(base + 82 + 58, 0x58);
    expect(walkArchive(0, size, <f64>size, 8, 0, 0, 100)).toBe(Status.AR_BAD_TERMINATOR);
    expect(getResult(R_ERROR_POS)).toBe(82 + 58);
    expect(getResult(R_COUNT)).toBe(1);

    size = writeArchive(base);
    put(base + 82 + 48, "1x");
    expect(walkArchive(0, size, <f64>size, 8, 0, 0, 100)).toBe(Status.AR_BAD_SIZE);
    expect(getResult(R_ERROR_POS)).toBe(82 + 48);

    size = writeArchive(base);
    put(base + 146, "/zz");
    expect(walkArchive(0, size, <f64>size, 8, 0, 0, 100)).toBe(Status.AR_BAD_LONG_NAME);

    size = writeArchive(base);
    expect(walkArchive(0, size - 1, <f64>(size - 1), 8, 0, 0, 100)).toBe(Status.AR_MEMBER_PAST_END);
    expect(walkArchive(0, size, <f64>(size + 30), 8, 0, 0, 100)).toBe(Status.AR_HEADER_TRUNCATED);
    expect(getResult(R_ERROR_POS)).toBe(208);
  });

  test("reads BSD names and leading-space errors", () => {
    const base = reserveWindow(4096);
    put(base, "!<arch>\n");
    header(base + 8, "#1/6", "10");
    put(base + 68, "x.o\0\0\0data");
    expect(walkArchive(0, 78, 78, 8, 0, AR_WALK_BSD, 10)).toBe(Status.DONE);
    expect(rec(0, 1)).toBe(<f64>AR_NAME_BSD_LONG);
    expect(rec(0, 2)).toBe(68);
    expect(rec(0, 3)).toBe(6);
    expect(rec(0, 4)).toBe(74);
    expect(rec(0, 5)).toBe(4);
    header(base + 8, "#1/16", "10");
    expect(walkArchive(0, 78, 78, 8, 0, AR_WALK_BSD, 10)).toBe(Status.AR_BSD_NAME_PAST_END);
    header(base + 8, " x", "10");
    expect(walkArchive(0, 78, 78, 8, 0, AR_WALK_BSD, 10)).toBe(Status.AR_LEADING_SPACE);
  });

  test("thin members keep their data outside the archive", () => {
    const base = reserveWindow(4096);
    put(base, "!<thin>\n");
    header(base + 8, "/", "4");
    put(base + 68, "\0\0\0\0");
    header(base + 72, "sub/x.o/", "5000");
    expect(walkArchive(0, 132, 132, 8, 0, AR_WALK_THIN, 10)).toBe(Status.DONE);
    expect(getResult(R_COUNT)).toBe(2);
    expect(rec(0, 1)).toBe(<f64>AR_NAME_SYMTAB);
    expect(rec(0, 7)).toBe(0);
    expect(rec(1, 5)).toBe(0);
    expect(rec(1, 6)).toBe(5000);
    expect(rec(1, 7)).toBe(1);
  });
});
