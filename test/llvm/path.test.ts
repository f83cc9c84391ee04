// sys::path::filename/stem/extension in the POSIX style: the archive unbundler names members with them.
import { describe, expect, it } from "vitest";
import { extension, filename, stem } from "../../src/llvm/path.js";

describe("llvm::sys::path (posix)", () => {
  it.each([
    // path, filename, stem, extension (llvm/unittests/Support/Path.cpp and the Path.cpp rules)
    ["foo.o", "foo.o", "foo", ".o"],
    ["dir/foo.tar.gz", "foo.tar.gz", "foo.tar", ".gz"],
    ["../x.bc", "x.bc", "x", ".bc"],
    ["/etc/passwd", "passwd", "passwd", ""],
    ["a/b/", ".", ".", ""],
    ["/", "/", "/", ""],
    ["//", "/", "/", ""],
    ["//net", "//net", "//net", ""],
    ["//net/x.o", "x.o", "x", ".o"],
    ["..", "..", "..", ""],
    [".", ".", ".", ""],
    [".bashrc", ".bashrc", "", ".bashrc"],
    ["a..b", "a..b", "a.", ".b"],
    ["", "", "", ""],
    ["x/.", ".", ".", ""],
    ["a//b", "b", "b", ""],
  ])("%j", (path, name, base, ext) => {
    expect(filename(path)).toBe(name);
    expect(stem(path)).toBe(base);
    expect(extension(path)).toBe(ext);
  });
});
