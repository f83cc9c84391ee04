/**
 * `JSON.stringify(value, null, 2)` as pieces of text, so that the page can write the `ls --json` report of
 * a file of 100,000 entries a slice of time at a time: one JSON.stringify of it took 167 ms of the main
 * thread (measured, bench/browser.mjs). The text is exactly what JSON.stringify writes: objects and arrays
 * are walked here, and each flat value (a primitive, or an object or array holding only primitives, such
 * as an entry) is written by JSON.stringify itself, indented to its depth (JSON text has no raw newline
 * inside a string, so every newline of it is a line break to indent).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const GAP = "  ";

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/** What JSON.stringify writes for `value` (undefined: nothing, as for undefined, functions and symbols). */
function prepared(holder: unknown, key: string, value: unknown): unknown {
  if (isContainer(value) && typeof (value as { toJSON?: unknown }).toJSON === "function") return (value as { toJSON(key: string): unknown }).toJSON(key);
  return value;
}

function isFlat(value: object): boolean {
  for (const v of Object.values(value)) if (isContainer(v)) return false;
  return true;
}

/** The text of `value` at indentation `pad`, in pieces; nothing for a value JSON.stringify omits. */
function* pieces(value: unknown, pad: string): Generator<string> {
  if (!isContainer(value) || isFlat(value)) {
    const text = JSON.stringify(value, null, 2) as string | undefined;
    if (text !== undefined) yield pad === "" ? text : text.replace(/\n/g, `\n${pad}`);
    return;
  }
  const inner = pad + GAP;
  if (Array.isArray(value)) {
    yield "[";
    for (let i = 0; i < value.length; i++) {
      yield `${i === 0 ? "" : ","}\n${inner}`;
      let wrote = false;
      for (const piece of pieces(prepared(value, String(i), value[i]), inner)) {
        wrote = true;
        yield piece;
      }
      // An array writes null where JSON.stringify omits a value.
      if (!wrote) yield "null";
    }
    yield `\n${pad}]`;
    return;
  }
  let first = true;
  for (const [key, raw] of Object.entries(value)) {
    const v = prepared(value, key, raw);
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    yield `${first ? "{" : ","}\n${inner}${JSON.stringify(key)}: `;
    first = false;
    yield* pieces(v, inner);
  }
  yield first ? "{}" : `\n${pad}}`;
}

/** JSON.stringify(value, null, 2), as pieces to be joined. */
export function jsonPieces(value: Json | object): Generator<string> {
  return pieces(prepared({ "": value }, "", value), "");
}

/**
 * JSON.stringify(value, null, 2), written `budgetMs` of main-thread time at a time (`pause` lets the page
 * paint and take input between slices). Returns the text in a few large chunks (one per slice).
 */
export async function jsonText(value: Json | object, budgetMs: number, pause: () => Promise<void>): Promise<string[]> {
  const chunks: string[] = [];
  const it = jsonPieces(value);
  for (let done = false; !done;) {
    const slice: string[] = [];
    const until = performance.now() + budgetMs;
    let n = 0;
    // The clock is read every 64 pieces: reading it costs more than writing a piece.
    while (!done && ((++n & 63) !== 0 || performance.now() < until)) {
      const next = it.next();
      if ((done = next.done === true)) break;
      slice.push(next.value);
    }
    chunks.push(slice.join(""));
    if (!done) await pause();
  }
  return chunks;
}
