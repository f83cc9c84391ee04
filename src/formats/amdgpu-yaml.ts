/**
 * Code object v2's metadata: the YAML document of the NT_AMD_HSA_METADATA note (owner "AMD", type 10), as LLVM's
 * YAML I/O writes it (llvm/lib/Support/AMDGPUMetadata.cpp `HSAMD::toString`, llvm/include/llvm/Support/
 * AMDGPUMetadata.h for the keys; llvm-readelf --notes prints the text as is). Decoded into the same values the
 * v3+ msgpack note decodes into (src/formats/msgpack.ts: Maps, arrays, strings, numbers, booleans), keys as in
 * the note (`Kernels`, `Name`, `CodeProps`, `NumVGPRs`).
 *
 * The subset read is what YAML I/O emits for that document, no more:
 *
 * | form                        | example                                  |
 * |-----------------------------|------------------------------------------|
 * | document markers            | `---` first, `...` last (both optional)  |
 * | block mapping               | `Key:  value` / `Key:` + a nested block  |
 * | block sequence              | `- Name: add` (a mapping) / `- value`    |
 * | flow sequence of scalars    | `[ 1, 0 ]`, `[]`                         |
 * | empty flow mapping          | `{}`                                     |
 * | plain scalar                | `64`, `true`, `OpenCL C`, `-1`, `0x10`    |
 * | single-quoted scalar        | `'add@kd'` (`''` is a quote)             |
 * | double-quoted scalar        | `"a\tb"` (`\\ \" \t \n \r \0 \xHH`)      |
 *
 * A plain scalar that reads as a decimal or 0x integer becomes a number, `true`/`false` a boolean; everything
 * else (quoted scalars always) a string. Anything outside the subset (anchors, tags, block scalars, flow
 * mappings with entries, tabs for indentation, nested flow sequences) is refused.
 *
 * Hostile input: the text is at most `MAX_YAML_BYTES`, nesting at most `maxDepth` levels, a line at most
 * `MAX_YAML_LINE` bytes, and every value is built from bytes of the input (nothing is allocated from a count
 * it states). Errors are `OffloadKitError("AMDGPU_YAML_MALFORMED")` with the byte offset of the offending
 * line (plus `baseOffset`: where the note's descriptor is in the code object).
 */
import { OffloadKitError } from "../engine/errors.js";
import type { MsgpackMap, MsgpackValue } from "./msgpack.js";

/** The largest YAML text read (a v2 note lists each kernel's arguments; large libraries stay far below this). */
export const MAX_YAML_BYTES = 64 * 1024 * 1024;
/** The longest line (a mangled name and its quotes fit many times over). */
export const MAX_YAML_LINE = 1024 * 1024;

export interface YamlDecodeOptions {
  /** Deepest nesting of mappings and sequences (16). */
  readonly maxDepth?: number;
  /** Where the text sits in its file, added to error offsets (0). */
  readonly baseOffset?: number;
}

interface Line {
  /** Byte offset of the line's first character. */
  readonly at: number;
  readonly indent: number;
  /** The line without its indentation and trailing spaces. */
  readonly text: string;
}

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * Decodes the YAML text of a v2 metadata note (`bytes`, the descriptor; a trailing NUL and padding are
 * ignored) into a Map. Throws AMDGPU_YAML_MALFORMED (see the module docblock).
 */
export function decodeAmdgpuYaml(bytes: Uint8Array, options: YamlDecodeOptions = {}): MsgpackMap {
  const base = options.baseOffset ?? 0;
  const maxDepth = options.maxDepth ?? 16;
  const fail = (message: string, at: number): never => {
    throw new OffloadKitError("AMDGPU_YAML_MALFORMED", `AMDGPU metadata YAML: ${message} at offset ${base + at}`, { offset: base + at, field: "yaml" });
  };
  if (bytes.length > MAX_YAML_BYTES) fail(`text of ${bytes.length} bytes is larger than ${MAX_YAML_BYTES}`, 0);
  let length = bytes.indexOf(0);
  if (length < 0) length = bytes.length;
  for (let i = length; i < bytes.length; i++) if (bytes[i] !== 0) fail("text after the terminating NUL", i);
  // Byte offsets must stay those of the input, so lines are cut from a latin1 view (one char per byte) and
  // scalars re-decoded as UTF-8 where they hold non-ASCII bytes.
  const text = latin1.decode(bytes.subarray(0, length));

  const lines: Line[] = [];
  let started = false;
  let ended = false;
  for (let at = 0; at < text.length;) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    if (end - at > MAX_YAML_LINE) fail(`line of ${end - at} bytes is longer than ${MAX_YAML_LINE}`, at);
    let line = text.slice(at, end);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    let indent = 0;
    while (indent < line.length && line[indent] === " ") indent++;
    if (line[indent] === "\t") fail("a tab in indentation", at + indent);
    const body = line.slice(indent).trimEnd();
    if (body !== "" && !body.startsWith("#")) {
      if (ended) fail("content after the document end marker '...'", at);
      if (indent === 0 && (body === "---" || body.startsWith("--- "))) {
        if (started || lines.length > 0) fail("a second document", at);
        started = true;
        const rest = body.slice(3).trim();
        if (rest !== "") lines.push({ at: at + 4, indent: 4, text: rest });
      } else if (indent === 0 && body === "...") ended = true;
      else lines.push({ at, indent, text: body });
    }
    at = end + 1;
  }

  let next = 0;

  /** Text cut from the latin1 view, as the UTF-8 it is. */
  const scalarText = (raw: string): string =>
    // eslint-disable-next-line no-control-regex
    /[^\x00-\x7f]/.test(raw) ? utf8.decode(Uint8Array.from(raw, (c) => c.charCodeAt(0))) : raw;

  /** One scalar or flow collection written on a line, from its text (`at`: its offset, for errors). */
  const inlineValue = (raw: string, at: number): MsgpackValue => {
    if (raw.startsWith("'")) {
      if (raw.length < 2 || !raw.endsWith("'")) fail("unterminated single-quoted scalar", at);
      const body = raw.slice(1, -1);
      if (/'(?!')/.test(body.replace(/''/g, ""))) fail("a lone quote inside a single-quoted scalar", at);
      return scalarText(body.replace(/''/g, "'"));
    }
    if (raw.startsWith('"')) return doubleQuoted(raw, at);
    if (raw.startsWith("[")) {
      if (!raw.endsWith("]")) fail("unterminated flow sequence", at);
      const body = raw.slice(1, -1).trim();
      if (body === "") return [];
      const items: MsgpackValue[] = [];
      for (const part of splitFlow(body, at)) {
        const item = part.trim();
        if (item === "") fail("an empty flow sequence entry", at);
        if (/^[[{]/.test(item)) fail("a nested flow collection", at);
        items.push(inlineValue(item, at));
      }
      return items;
    }
    if (raw.startsWith("{")) {
      if (raw.replace(/\s+/g, "") !== "{}") fail("a flow mapping with entries", at);
      return new Map();
    }
    if (/^[&*!|>%@`]/.test(raw)) fail(`unsupported YAML syntax '${raw[0]}'`, at);
    return plainScalar(raw, at);
  };

  /** Splits a flow sequence's body at commas outside quotes. */
  const splitFlow = (body: string, at: number): string[] => {
    const parts: string[] = [];
    let start = 0;
    let quote = "";
    for (let i = 0; i < body.length; i++) {
      const c = body[i]!;
      if (quote !== "") {
        if (c === "\\" && quote === '"') i++;
        else if (c === quote) {
          if (quote === "'" && body[i + 1] === "'") i++;
          else quote = "";
        }
      } else if (c === "'" || c === '"') quote = c;
      else if (c === ",") {
        parts.push(body.slice(start, i));
        start = i + 1;
      }
    }
    if (quote !== "") fail("unterminated quoted scalar in a flow sequence", at);
    parts.push(body.slice(start));
    return parts;
  };

  const doubleQuoted = (raw: string, at: number): string => {
    if (raw.length < 2 || !raw.endsWith('"')) fail("unterminated double-quoted scalar", at);
    const body = raw.slice(1, -1);
    let out = "";
    for (let i = 0; i < body.length; i++) {
      const c = body[i]!;
      if (c === '"') fail("a lone quote inside a double-quoted scalar", at);
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = body[++i];
      const simple: Record<string, string> = { "\\": "\\", '"': '"', "/": "/", t: "\t", n: "\n", r: "\r", "0": "\0", a: "\x07", b: "\b", e: "\x1b", f: "\f", v: "\v", " ": " " };
      if (e !== undefined && simple[e] !== undefined) out += simple[e];
      else if (e === "x" && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 1, i + 3))) {
        out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16));
        i += 2;
      } else fail(`unsupported escape '\\${e ?? ""}' in a double-quoted scalar`, at);
    }
    return scalarText(out);
  };

  const plainScalar = (raw: string, at: number): MsgpackValue => {
    if (/^-?[0-9]+$/.test(raw)) {
      const n = Number(raw);
      return Number.isSafeInteger(n) ? n : BigInt(raw);
    }
    if (/^0x[0-9a-fA-F]+$/.test(raw)) {
      const n = BigInt(raw);
      return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
    }
    if (raw === "true") return true;
    if (raw === "false") return false;
    if (raw.includes(": ") || raw.includes(" #")) fail(`'${raw.slice(0, 40)}' is not a plain scalar`, at);
    return scalarText(raw);
  };

  /** `key: rest` at the start of `text` (the key plain or quoted), or undefined when the line holds no key. */
  const splitKey = (text: string, at: number): { key: string; rest: string } | undefined => {
    if (text.startsWith("'") || text.startsWith('"')) {
      const quote = text[0]!;
      let i = 1;
      for (; i < text.length; i++) {
        if (text[i] === "\\" && quote === '"') i++;
        else if (text[i] === quote) {
          if (quote === "'" && text[i + 1] === "'") i++;
          else break;
        }
      }
      if (text[i + 1] !== ":" || (i + 2 < text.length && text[i + 2] !== " ")) return undefined;
      const key = inlineValue(text.slice(0, i + 1), at);
      return { key: String(key), rest: text.slice(i + 2).trim() };
    }
    const colon = text.search(/:( |$)/);
    if (colon <= 0) return undefined;
    return { key: scalarText(text.slice(0, colon)), rest: text.slice(colon + 1).trim() };
  };

  /** The block (mapping or sequence) whose first line is `lines[next]`, at that line's indentation. */
  const block = (depth: number): MsgpackValue => {
    const first = lines[next]!;
    if (depth >= maxDepth) fail(`nesting deeper than ${maxDepth}`, first.at);
    return first.text === "-" || first.text.startsWith("- ") ? sequence(first.indent, depth) : mapping(first.indent, depth);
  };

  /** The value after `key:` with nothing on its line: a nested block, or null when none follows. */
  const nestedAfter = (indent: number, depth: number, sequenceMayAlign: boolean): MsgpackValue => {
    const line = lines[next];
    if (line === undefined) return null;
    const isItem = line.text === "-" || line.text.startsWith("- ");
    // YAML lets a mapping's sequence value sit at the key's own indentation.
    if (line.indent > indent || (sequenceMayAlign && isItem && line.indent === indent)) return block(depth + 1);
    return null;
  };

  const mapping = (indent: number, depth: number, firstLine?: Line): MsgpackMap => {
    const out: MsgpackMap = new Map();
    let line: Line | undefined = firstLine;
    for (;;) {
      if (line === undefined) {
        line = lines[next];
        if (line === undefined || line.indent < indent) break;
        if (line.indent > indent) fail("unexpected indentation", line.at);
        if (line.text === "-" || line.text.startsWith("- ")) break;
        next++;
      }
      const pair = splitKey(line.text, line.at);
      if (pair === undefined) fail("expected 'key: value'", line.at);
      const { key, rest } = pair!;
      if (out.has(key)) fail(`repeated key '${key.slice(0, 40)}'`, line.at);
      out.set(key, rest === "" ? nestedAfter(indent, depth, true) : inlineValue(rest, line.at + line.indent + line.text.indexOf(rest)));
      line = undefined;
    }
    return out;
  };

  const sequence = (indent: number, depth: number): MsgpackValue[] => {
    const items: MsgpackValue[] = [];
    for (;;) {
      const line = lines[next];
      if (line === undefined || line.indent < indent) break;
      if (line.indent > indent) fail("unexpected indentation", line.at);
      if (!(line.text === "-" || line.text.startsWith("- "))) break;
      next++;
      const rest = line.text.slice(1).trimStart();
      if (rest === "") {
        items.push(nestedAfter(indent, depth, false));
        continue;
      }
      const itemIndent = indent + (line.text.length - rest.length);
      if (!/^[[{]/.test(rest) && splitKey(rest, line.at) !== undefined) {
        // `- Key: value` opens a mapping whose keys line up with this first one.
        if (depth + 1 >= maxDepth) fail(`nesting deeper than ${maxDepth}`, line.at);
        items.push(mapping(itemIndent, depth + 1, { at: line.at, indent: itemIndent, text: rest }));
      } else if (rest.startsWith("- ") || rest === "-") fail("a sequence nested on one line", line.at);
      else items.push(inlineValue(rest, line.at + itemIndent));
    }
    return items;
  };

  if (lines.length === 0) return new Map();
  const document = block(0);
  if (next < lines.length) fail("unexpected indentation", lines[next]!.at);
  if (!(document instanceof Map)) fail("the document is not a mapping", lines[0]!.at);
  return document as MsgpackMap;
}
