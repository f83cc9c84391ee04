/**
 * conda's info/paths.json (src/packages/conda.ts): the JSON parser that keeps spans, checked against
 * JSON.parse (the same texts accepted, the same values), the rows read from it, and the rewrite of the
 * edited rows' sha256 and size_in_bytes round-tripping: what JSON.parse reads back is the input with exactly
 * those values changed, and the rows read again.
 */
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { jsonValue, parseJsonSpans, readPathsJson, rewritePathsJson } from "../../../../src/packages/conda.js";
import type { Rand } from "../rand.js";
import type { Field, Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";

const PATHS = ["lib/libamdhip64.so", "lib/python3.12/site-packages/torch/lib/libtorch_hip.so", "bin/x", "./a", "/abs", "a\\b", "ü/ß", "", "lib/a\u2028b"];
const DICTIONARY = ['"paths_version"', '"paths"', '"_path"', '"sha256"', '"size_in_bytes"', '"path_type"', '"hardlink"', '"softlink"', '"file_mode"', '"prefix_placeholder"', "\\u0000", "\\ud800", "1e999", "-0", "null", "true", "[]", "{}", ","];

const latin = new TextDecoder("utf-8");

/** A paths.json as conda-build writes it (indent 2, sorted keys), sometimes compact, with the size values as fields. */
function pathsSample(r: Rand): Sample {
  const rows = Array.from({ length: r.int(4) }, () => {
    const row: Record<string, unknown> = { _path: r.pick(PATHS) + (r.bool(0.3) ? String(r.int(9)) : ""), path_type: r.pick(["hardlink", "softlink", "directory"]) };
    if (r.bool(0.8)) row.sha256 = Array.from({ length: 64 }, () => "0123456789abcdef"[r.int(16)]).join("");
    if (r.bool(0.8)) row.size_in_bytes = r.int(100000);
    if (r.bool(0.2)) Object.assign(row, { file_mode: "binary", prefix_placeholder: "/opt/anaconda1anaconda2anaconda3" });
    return row;
  });
  const text = JSON.stringify({ paths: rows, paths_version: r.bool(0.9) ? 1 : r.pick([2, 0, "1"]) }, null, r.bool(0.7) ? 2 : undefined);
  const bytes = new TextEncoder().encode(text);
  const fields: Field[] = [];
  for (const match of text.matchAll(/"size_in_bytes": ?(\d+)/g)) {
    const digits = match[1]!;
    fields.push({ at: new TextEncoder().encode(text.slice(0, match.index! + match[0].length - digits.length)).length, size: digits.length, kind: "size", decimal: true });
  }
  return { bytes, fields };
}

/** What JSON.parse says of `text`: its value, or that it refuses it. */
function native(text: string): { ok: unknown } | { refused: true } {
  try {
    return { ok: JSON.parse(text) as unknown };
  } catch {
    return { refused: true };
  }
}

export const condaPathsTarget: FuzzTarget = {
  name: "conda-paths",
  about: "conda info/paths.json: the span-keeping JSON parser against JSON.parse, its rows (readPathsJson), and the sha256/size rewrite (rewritePathsJson)",
  engines: false,
  sources: false,
  magic: new TextEncoder().encode('{"paths"'),
  dictionary: DICTIONARY,
  generate: pathsSample,
  run(input) {
    const text = latin.decode(input);
    const expected = native(text);
    let parsed: unknown;
    try {
      parsed = jsonValue(parseJsonSpans(text));
    } catch (e) {
      if (!(e instanceof OffloadKitError)) throw e;
      // Refused where JSON.parse accepts: only past the nesting limit.
      if ("ok" in expected && !/nested deeper than/.test(e.message)) throw new Error(`parseJsonSpans refused what JSON.parse reads: ${e.message}`);
      throw e;
    }
    if (!("ok" in expected)) throw new Error("parseJsonSpans accepted what JSON.parse refuses");
    if (JSON.stringify(parsed) !== JSON.stringify(expected.ok)) throw new Error("parseJsonSpans and JSON.parse disagree on the value");
    return readPathsJson(text).map((row) => ({ path: row.path, sha256: row.sha256?.kind, size: row.size?.kind }));
  },
  roundTrip(input) {
    const text = latin.decode(input);
    let rows;
    try {
      rows = readPathsJson(text);
    } catch {
      return undefined;
    }
    const sha = "ab".repeat(32);
    const changed = new Map(rows.filter((_, i) => i % 2 === 0).map((row) => [row.path.replace(/^(\.?\/)+/, ""), { sha256: sha, size: 4242 }]));
    const made = rewritePathsJson(text, changed);
    const before = JSON.parse(text) as { paths: Record<string, unknown>[] };
    const after = JSON.parse(made.text) as { paths: Record<string, unknown>[] };
    for (const row of before.paths) {
      const now = changed.get(String(row._path).replace(/^(\.?\/)+/, ""));
      if (now === undefined) continue;
      if ("sha256" in row) row.sha256 = now.sha256;
      if ("size_in_bytes" in row) row.size_in_bytes = now.size;
    }
    if (JSON.stringify(before) !== JSON.stringify(after)) return "rewritePathsJson changed something other than the edited rows' sha256 and size_in_bytes";
    if (readPathsJson(made.text).length !== rows.length) return "the rewritten paths.json reads as a different number of rows";
    return undefined;
  },
};
