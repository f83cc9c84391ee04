// conda's info/paths.json (src/packages/conda.ts): read with the spans of its values, rewritten for the edited
// files' sha256 and size_in_bytes with every other byte kept; its errors name the offset. The fuzz campaign's
// `conda-paths` target checks the parser against JSON.parse on random and mutated texts.
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { jsonValue, parseJsonSpans, readPathsJson, rewritePathsJson } from "../../src/packages/conda.js";

const SHA = "0".repeat(64);
const NEW = "f".repeat(64);
// As conda-build writes it: json.dump(indent=2, sort_keys=True), non-ASCII escaped.
const PATHS = `{
  "paths": [
    {
      "_path": "lib/libx.so",
      "path_type": "hardlink",
      "sha256": "${SHA}",
      "size_in_bytes": 38016
    },
    {
      "_path": "share/caf\\u00e9.txt",
      "file_mode": "text",
      "path_type": "hardlink",
      "prefix_placeholder": "/opt/anaconda1anaconda2anaconda3",
      "sha256": "${SHA}",
      "size_in_bytes": 12
    }
  ],
  "paths_version": 1
}`;

function thrown(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    if (e instanceof OffloadKitError) return e;
    throw e;
  }
  throw new Error("did not throw");
}

describe("paths.json", () => {
  it("reads the rows, escapes decoded, with the spans of sha256 and size_in_bytes", () => {
    const rows = readPathsJson(PATHS);
    expect(rows.map((r) => r.path)).toEqual(["lib/libx.so", "share/café.txt"]);
    expect(PATHS.slice(rows[0]!.size!.start, rows[0]!.size!.end)).toBe("38016");
    expect(PATHS.slice(rows[1]!.sha256!.start, rows[1]!.sha256!.end)).toBe(`"${SHA}"`);
  });

  it("rewrites only the edited rows' two values; every other byte kept, the \\u escape included", () => {
    const made = rewritePathsJson(PATHS, new Map([["lib/libx.so", { sha256: NEW, size: 29824 }], ["bin/gone", { sha256: NEW, size: 1 }]]));
    expect(made.text).toBe(PATHS.replace(`"${SHA}",\n      "size_in_bytes": 38016`, `"${NEW}",\n      "size_in_bytes": 29824`));
    expect(made.rewritten).toEqual(["lib/libx.so"]);
    expect(made.missing).toEqual(["bin/gone"]);
  });

  it("a row named with ./ matches the tar's name; a row without either value is reported missing", () => {
    const text = '{"paths":[{"_path":"./a"},{"_path":"b","size_in_bytes":5}],"paths_version":1}';
    const made = rewritePathsJson(text, new Map([["a", { sha256: NEW, size: 1 }], ["b", { sha256: NEW, size: 2 }]]));
    expect(made.text).toBe('{"paths":[{"_path":"./a"},{"_path":"b","size_in_bytes":2}],"paths_version":1}');
    expect(made.missing).toEqual(["a"]);
  });

  it("the last of repeated keys is the one rewritten, as JSON.parse and Python read it", () => {
    const text = '{"paths":[{"_path":"a","size_in_bytes":1,"size_in_bytes":2}],"paths_version":1}';
    const made = rewritePathsJson(text, new Map([["a", { sha256: NEW, size: 9 }]]));
    expect(made.text).toBe('{"paths":[{"_path":"a","size_in_bytes":1,"size_in_bytes":9}],"paths_version":1}');
    expect(JSON.parse(made.text).paths[0].size_in_bytes).toBe(9);
  });

  it("refuses other paths_versions, and malformed JSON at its offset", () => {
    expect(thrown(() => readPathsJson('{"paths":[],"paths_version":2}'))).toMatchObject({ code: "CONDA_PATHS_UNSUPPORTED", field: "paths_version" });
    expect(thrown(() => readPathsJson('{"paths":[{"_path":"a"}, ],"paths_version":1}'))).toMatchObject({ code: "CONDA_PATHS_MALFORMED", offset: 25 });
    expect(thrown(() => readPathsJson('{"paths":[{"path":"a"}],"paths_version":1}'))).toMatchObject({ code: "CONDA_PATHS_MALFORMED", field: "_path" });
    expect(thrown(() => parseJsonSpans('"a\tb"'))).toMatchObject({ code: "CONDA_PATHS_MALFORMED", offset: 2 });
    expect(thrown(() => parseJsonSpans("[".repeat(100) + "]".repeat(100))).message).toMatch(/nested deeper than 64/);
  });

  it("parses what JSON.parse parses, to the same values", () => {
    for (const text of [PATHS, '{"__proto__":1,"a":[-0,1e5,-1.5E-3,true,false,null,"\\ud800\\/"]}', " [ ] ", '{"a":1,"b":2,"a":3}', "1".repeat(500)]) {
      expect(JSON.stringify(jsonValue(parseJsonSpans(text)))).toBe(JSON.stringify(JSON.parse(text)));
    }
  });
});
