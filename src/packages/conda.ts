/**
 * conda's `info/paths.json` (paths_version 1, as conda-build writes it and conda reads it: conda's
 * `conda/models/records.py` PathDataV1; the layout is conda's docs/spec "Package metadata"), read and
 * rewritten for the files an edit changed. conda checks each extracted file against its row's `sha256`
 * and `size_in_bytes` (its `safety_checks`, "warn" by default, "enabled" refuses the package), so an edited
 * file's row must say its new bytes.
 *
 * The rewrite changes only those two values' text in the edited rows: every other byte of the file (key
 * order, indentation, `\u` escapes as Python's json writes them) stays, so the diff of paths.json is the
 * edited rows' hashes and sizes. For that the JSON is parsed here with the span of every value (a small
 * RFC 8259 parser: JSON.parse gives values, not where they are), then checked against JSON.parse.
 *
 * | key | kept / rewritten |
 * |---|---|
 * | `paths_version` | must be 1 (conda refuses others) |
 * | `paths[i]._path` | kept: the file's path under the prefix, as the tar names it less a leading `./` |
 * | `paths[i].sha256` | rewritten (64 lowercase hex digits) when present |
 * | `paths[i].size_in_bytes` | rewritten (a decimal integer) when present |
 * | `path_type`, `file_mode`, `prefix_placeholder`, `no_link`, ... | kept |
 */
import { OffloadKitError } from "../engine/errors.js";

/** A parsed JSON value with the span of its text. */
export type JsonNode =
  | { readonly kind: "object"; readonly start: number; readonly end: number; readonly members: readonly { readonly key: string; readonly value: JsonNode }[] }
  | { readonly kind: "array"; readonly start: number; readonly end: number; readonly items: readonly JsonNode[] }
  | { readonly kind: "string"; readonly start: number; readonly end: number; readonly value: string }
  | { readonly kind: "number"; readonly start: number; readonly end: number; readonly value: number }
  | { readonly kind: "literal"; readonly start: number; readonly end: number; readonly value: boolean | null };

/** RFC 8259's number, matched where the parser stands. */
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

/** Objects and arrays nested deeper than this are refused (paths.json nests 3 deep). */
const MAX_DEPTH = 64;

function malformed(message: string, offset: number, field = "json"): OffloadKitError {
  return new OffloadKitError("CONDA_PATHS_MALFORMED", `malformed info/paths.json: ${message} at offset ${offset}`, { offset, field });
}

/** Parses JSON text (RFC 8259) into nodes that know their spans; throws CONDA_PATHS_MALFORMED with the offset. */
export function parseJsonSpans(text: string): JsonNode {
  let at = 0;
  const space = () => {
    while (at < text.length && (text[at] === " " || text[at] === "\t" || text[at] === "\n" || text[at] === "\r")) at++;
  };
  const string = (): { value: string; start: number; end: number } => {
    const start = at;
    if (text[at] !== '"') throw malformed("expected a string", at);
    at++;
    let value = "";
    for (;;) {
      if (at >= text.length) throw malformed("unterminated string", start);
      const c = text.charCodeAt(at);
      if (c === 0x22) {
        at++;
        return { value, start, end: at };
      }
      if (c < 0x20) throw malformed("control character in a string", at);
      if (c !== 0x5c) {
        value += text[at++];
        continue;
      }
      const escape = text[at + 1];
      const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
      if (escape !== undefined && escape in simple) {
        value += simple[escape];
        at += 2;
      } else if (escape === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) {
        value += String.fromCharCode(parseInt(text.slice(at + 2, at + 6), 16));
        at += 6;
      } else throw malformed("bad escape in a string", at);
    }
  };
  const value = (depth: number): JsonNode => {
    space();
    const start = at;
    const c = text[at];
    if (c === "{" || c === "[") {
      if (depth >= MAX_DEPTH) throw malformed(`nested deeper than ${MAX_DEPTH}`, at);
      at++;
      space();
      const close = c === "{" ? "}" : "]";
      const members: { key: string; value: JsonNode }[] = [];
      const items: JsonNode[] = [];
      if (text[at] !== close) {
        for (;;) {
          space();
          if (c === "{") {
            const key = string().value;
            space();
            if (text[at] !== ":") throw malformed("expected ':'", at);
            at++;
            members.push({ key, value: value(depth + 1) });
          } else items.push(value(depth + 1));
          space();
          if (text[at] === ",") {
            at++;
            continue;
          }
          if (text[at] === close) break;
          throw malformed(`expected ',' or '${close}'`, at);
        }
      }
      at++;
      return c === "{" ? { kind: "object", start, end: at, members } : { kind: "array", start, end: at, items };
    }
    if (c === '"') {
      const s = string();
      return { kind: "string", ...s };
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (number !== null) {
      at += number[0].length;
      return { kind: "number", start, end: at, value: Number(number[0]) };
    }
    for (const [word, literal] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return { kind: "literal", start, end: at, value: literal };
      }
    }
    throw malformed(at >= text.length ? "unexpected end" : "unexpected character", at);
  };
  const root = value(0);
  space();
  if (at !== text.length) throw malformed("text after the value", at);
  return root;
}

/** The value a node stands for, as JSON.parse gives it (the last of repeated keys; `__proto__` an own key). */
export function jsonValue(node: JsonNode): unknown {
  switch (node.kind) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const m of node.members) Object.defineProperty(out, m.key, { value: jsonValue(m.value), enumerable: true, writable: true, configurable: true });
      return out;
    }
    case "array":
      return node.items.map(jsonValue);
    default:
      return node.value;
  }
}

function member(node: JsonNode, key: string): JsonNode | undefined {
  if (node.kind !== "object") return undefined;
  // JSON.parse (and Python's json) keep the last of repeated keys.
  let found: JsonNode | undefined;
  for (const m of node.members) if (m.key === key) found = m.value;
  return found;
}

/** One row of paths.json: the file's path and where its sha256 and size values are. */
export interface CondaPathRow {
  readonly path: string;
  readonly sha256?: JsonNode;
  readonly size?: JsonNode;
}

/** The rows of a paths.json (paths_version 1); throws CONDA_PATHS_MALFORMED or CONDA_PATHS_UNSUPPORTED. */
export function readPathsJson(text: string): CondaPathRow[] {
  const root = parseJsonSpans(text);
  if (root.kind !== "object") throw malformed("not an object", root.start);
  const version = member(root, "paths_version");
  if (version === undefined || version.kind !== "number" || version.value !== 1) {
    throw new OffloadKitError("CONDA_PATHS_UNSUPPORTED", `info/paths.json: paths_version ${version === undefined ? "missing" : text.slice(version.start, version.end)}, conda reads 1 only`, { offset: version?.start ?? root.start, field: "paths_version" });
  }
  const paths = member(root, "paths");
  if (paths === undefined || paths.kind !== "array") throw malformed("'paths' is not a list", paths?.start ?? root.start, "paths");
  return paths.items.map((row) => {
    const path = member(row, "_path");
    if (path === undefined || path.kind !== "string") throw malformed("a row without a '_path' string", row.start, "_path");
    return { path: path.value, sha256: member(row, "sha256"), size: member(row, "size_in_bytes") };
  });
}

/** A path as paths.json names it: the tar's name less a leading `./` or `/`. */
export function condaPath(tarName: string): string {
  return tarName.replace(/^(\.?\/)+/, "");
}

/**
 * paths.json with the rows of `changed` (path -> new sha256 hex and size) given their new values, every
 * other byte kept. Returns the text and the paths whose rows were rewritten; a changed file with no row, or
 * a row without sha256 and size, is returned in `missing` (the caller says so).
 */
export function rewritePathsJson(text: string, changed: ReadonlyMap<string, { readonly sha256: string; readonly size: number }>): { readonly text: string; readonly rewritten: readonly string[]; readonly missing: readonly string[] } {
  const rows = readPathsJson(text);
  const edits: { start: number; end: number; text: string }[] = [];
  const rewritten: string[] = [];
  for (const row of rows) {
    const now = changed.get(condaPath(row.path));
    if (now === undefined) continue;
    if (!/^[0-9a-f]{64}$/.test(now.sha256) || !Number.isSafeInteger(now.size) || now.size < 0) throw new OffloadKitError("INTERNAL", `rewritePathsJson: bad value for '${row.path}'`);
    if (row.sha256 !== undefined) edits.push({ start: row.sha256.start, end: row.sha256.end, text: `"${now.sha256}"` });
    if (row.size !== undefined) edits.push({ start: row.size.start, end: row.size.end, text: String(now.size) });
    if (row.sha256 !== undefined || row.size !== undefined) rewritten.push(condaPath(row.path));
  }
  edits.sort((a, b) => a.start - b.start);
  let out = "";
  let copied = 0;
  for (const edit of edits) {
    out += text.slice(copied, edit.start) + edit.text;
    copied = edit.end;
  }
  out += text.slice(copied);
  const done = new Set(rewritten);
  return { text: out, rewritten, missing: [...changed.keys()].filter((p) => !done.has(p)) };
}

/** Where a conda package lists its files' sha256 and sizes. */
export const PATHS_JSON = "info/paths.json";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** paths.json's new bytes for `files`, and the edited paths it has no row for. */
export function newPathsJson(body: Uint8Array, files: readonly { readonly path: string; readonly sha256: string; readonly newSize: number }[], name: string): { bytes: Uint8Array; missing: readonly string[] } {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new OffloadKitError("CONDA_PATHS_MALFORMED", `${name}!${PATHS_JSON}: not UTF-8 text`, { field: PATHS_JSON });
  }
  const changed = new Map(files.map((f) => [condaPath(f.path), { sha256: f.sha256, size: f.newSize }]));
  try {
    const made = rewritePathsJson(text, changed);
    return { bytes: new TextEncoder().encode(made.text), missing: made.missing };
  } catch (e) {
    // `x.conda!info-x.tar.zst!info/paths.json: malformed: ... at offset N` (the offset in paths.json).
    if (e instanceof OffloadKitError && e.code.startsWith("CONDA_PATHS")) {
      const detail = e.message.replace(/^malformed info\/paths\.json: /, "malformed: ").replace(/^info\/paths\.json: /, "");
      throw new OffloadKitError(e.code, `${name}!${PATHS_JSON}: ${detail}`, { offset: e.offset, field: e.field });
    }
    throw e;
  }
}
