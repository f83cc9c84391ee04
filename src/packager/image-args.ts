/**
 * The `--image=<key>=<value>,...` argument of clang-offload-packager 19 (clang/tools/clang-offload-packager/
 * ClangOffloadPackager.cpp, `getImageArguments`), and the rules that hang off it: which string entries an
 * image gets and in which order, its image kind, the name an extracted image is written to, and whether a
 * binary matches a filter. Browser-safe: no I/O.
 *
 * - The text is cut at every ',' (`llvm::split`), each piece at its first '=' into key and value. A piece
 *   without '=' has a *null* value (`StringRef()`), which behaves as "" everywhere except one place: a null
 *   `file` yields no file at all (splitting a null StringRef yields nothing), while `file=` names the file "".
 * - A repeated key gets ",<value>" appended to its value, in place.
 * - The pieces go into a `DenseMap<StringRef, StringRef>`; the image's string entries are that map in
 *   iteration order with `file` and `kind` left out (they are copied into a MapVector, whose order the
 *   writer keeps). That order is the bucket order of llvm/dense-map.ts over *all* keys, `file` and `kind`
 *   included: they take buckets, and probing around them moves other keys. Verified against
 *   clang-offload-packager-19 on random key sets (test/differential/packager-native.test.ts).
 * - `file` may list several files (its value cut at ','): each becomes a binary of its own, in that order.
 * - Image kind: IMG_Bitcode when the file starts with bitcode magic ("BC\xC0\xDE", or the wrapper
 *   DE C0 17 0B), whatever its name ("Clang uses the '.o' suffix for LTO bitcode"); otherwise from the
 *   text after the last '.' of the file name (getImageKind: o, bc, cubin, fatbin, s; anything else, `.spv`
 *   included, is IMG_None; LLVM 23 makes `.spv` IMG_SPIRV). Case-sensitive; a name that is only ".o" still has extension "o".
 */
import { DenseMapModel } from "../llvm/dense-map.js";
import { extension, stem } from "../llvm/path.js";
import { getImageKind, getImageKind23, getImageKindName, getImageKindName23, getOffloadKind } from "../formats/offload-binary.js";
import type { LlvmMajor, OffloadImage } from "../formats/offload-binary.js";

/** A key's value: a byte string, or null for a piece without '='. */
export type ArgumentValue = string | null;

export interface ImageArguments {
  /** Keys and values in DenseMap iteration order. */
  readonly entries: readonly (readonly [string, ArgumentValue])[];
  has(key: string): boolean;
  /** The value ("" for a null value); undefined when the key is absent. */
  get(key: string): string | undefined;
  /** The raw value, null when the key was given without '='. */
  raw(key: string): ArgumentValue | undefined;
}

/** `llvm::split(text, sep)`: every piece, empty ones included; nothing at all for a null text. */
export function llvmSplit(text: ArgumentValue, separator: string): string[] {
  if (text === null) return [];
  return text.split(separator);
}

/** `StringRef::split('=')`: at the first separator; no separator gives a null right side. */
function splitOnce(text: string, separator: string): [string, ArgumentValue] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, null] : [text.slice(0, at), text.slice(at + separator.length)];
}

/** getImageArguments: `image` is a byte string (see formats/bytes.ts). */
export function parseImageArguments(image: string): ImageArguments {
  const map = new DenseMapModel<ArgumentValue>();
  for (const piece of llvmSplit(image, ",")) {
    const [key, value] = splitOnce(piece, "=");
    if (map.has(key)) map.set(key, `${map.get(key) ?? ""},${value ?? ""}`);
    else map.set(key, value);
  }
  const entries = [...map.entries()];
  return {
    entries,
    has: (key) => map.has(key),
    get: (key) => (map.has(key) ? (map.get(key) ?? "") : undefined),
    raw: (key) => map.get(key),
  };
}

/** The string entries an image gets, in the order they are written. */
export function packagerStringData(args: ImageArguments): [string, string][] {
  return args.entries.filter(([key]) => key !== "file" && key !== "kind").map(([key, value]) => [key, value ?? ""]);
}

/** The files one `--image` names (several when `file` was repeated or holds commas). */
export function imageFiles(args: ImageArguments): string[] {
  return llvmSplit(args.raw("file") ?? null, ",");
}

/** The offload kind of an image: `kind=` through getOffloadKind; none without it. */
export function imageOffloadKind(args: ImageArguments, llvm: LlvmMajor = 19): number {
  const kind = args.get("kind");
  return kind === undefined ? 0 : getOffloadKind(kind, llvm);
}

/** identify_magic(...) == file_magic::bitcode. */
export function isBitcodeMagic(head: Uint8Array): boolean {
  if (head.length < 4) return false;
  const raw = head[0] === 0x42 && head[1] === 0x43 && head[2] === 0xc0 && head[3] === 0xde;
  const wrapper = head[0] === 0xde && head[1] === 0xc0 && head[2] === 0x17 && head[3] === 0x0b;
  return raw || wrapper;
}

/** The image kind the packager gives a file, from its first bytes and its name. */
export function imageKindFor(path: string, head: Uint8Array, llvm23 = false): number {
  if (isBitcodeMagic(head)) return 2;
  return (llvm23 ? getImageKind23 : getImageKind)(extension(path).slice(1));
}

/**
 * Whether an image matches an extraction filter: every key equal (`file` ignored, `kind` compared as an
 * offload kind), a key the image lacks comparing as "".
 */
export function matchesFilter(args: ImageArguments, image: OffloadImage, llvm: LlvmMajor = 19): boolean {
  return args.entries.every(([key, value]) => {
    if (key === "file") return true;
    if (key === "kind") return image.offloadKind === getOffloadKind(value ?? "", llvm);
    return (image.strings.get(key) ?? "") === (value ?? "");
  });
}

/**
 * Where clang-offload-packager 19 writes an extracted image without `file=`:
 * `<input stem>-<triple>-<arch>.<n>.<ext>`, n counting this filter's matches, ext empty for IMG_None
 * (leaving a trailing dot). The triple and arch come from the file, so every '/' in them becomes '_' here
 * (the native tool would write into, or fail on, a directory named by them): the name always stays in the
 * current directory.
 */
export function extractedFileName(inputPath: string, image: OffloadImage, matchIndex: number): string {
  const safe = (text: string): string => text.replaceAll("/", "_");
  return `${stem(inputPath)}-${safe(image.triple)}-${safe(image.arch)}.${matchIndex}.${getImageKindName(image.imageKind)}`;
}

/**
 * The same name as LLVM 23's llvm-offload-binary makes it (`extractBinary`, llvm PR #184774): `-<arch>` only when
 * the arch is not empty, and `.spv` for IMG_SPIRV. '/' becomes '_' as above.
 */
export function extractedFileName23(inputPath: string, image: OffloadImage, index: number): string {
  const safe = (text: string): string => text.replaceAll("/", "_");
  const arch = image.arch === "" ? "" : `-${safe(image.arch)}`;
  return `${stem(inputPath)}-${safe(image.triple)}${arch}.${index}.${getImageKindName23(image.imageKind)}`;
}
