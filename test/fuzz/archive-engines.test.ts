// Differential property test (STYLE habit 8) for the archive member walk: random archives (GNU with
// symbol and long-name tables, BSD, thin) and random mutations of them go through both engines with a
// small window; the results must be identical, error code, offset and message included, and the only
// error ever thrown must be ours. Valid archives must round-trip through writeArchive/readArchive.
import { describe, expect, it } from "vitest";
import { readArchive, writeArchive } from "../../src/formats/archive.js";
import { latin1Decode, latin1Encode } from "../../src/formats/bytes.js";
import { makeEngine, outcome, randomBytes, rng } from "../engines.js";

const NAME_CHARS = latin1Encode("abcdefghijklmnopqrstuvwxyz0123456789._-/ #");

function randomName(next: () => number): string {
  const length = next() < 0.5 ? 1 + Math.floor(next() * 14) : 16 + Math.floor(next() * 30);
  let name = latin1Decode(randomBytes(next, length, NAME_CHARS));
  if (name.startsWith("/") || name.startsWith("#") || name.startsWith(" ")) name = `m${name}`;
  return name.replace(/\s+$/, "") || "m";
}

function headerText(name: string, size: number): string {
  return `${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"644".padEnd(8)}${String(size).padEnd(10)}\`\n`;
}

/** A BSD archive: `__.SYMDEF` via `#1/`, every name after its header. */
function bsdArchive(next: () => number): Uint8Array {
  let text = "!<arch>\n";
  const count = Math.floor(next() * 4);
  const members = [{ name: "__.SYMDEF SORTED", data: "\0\0\0\0\0\0\0\0" }];
  for (let i = 0; i < count; i++) members.push({ name: randomName(next).replace(/\//g, "_"), data: latin1Decode(randomBytes(next, Math.floor(next() * 20))) });
  for (const m of members) {
    const name = m.name + "\0".repeat(Math.floor(next() * 4));
    text += headerText(`#1/${name.length}`, name.length + m.data.length) + name + m.data;
    if (text.length % 2) text += "\n";
  }
  return latin1Encode(text);
}

/** A thin archive: a `//` table, members whose data lives elsewhere. */
function thinArchive(next: () => number): Uint8Array {
  const names = Array.from({ length: 1 + Math.floor(next() * 3) }, () => `dir/${randomName(next)}`);
  let table = "";
  const offsets = names.map((n) => {
    const at = table.length;
    table += `${n}/\n`;
    return at;
  });
  let text = `!<thin>\n${headerText("//", table.length)}${table}`;
  if (text.length % 2) text += "\n";
  names.forEach((_, i) => (text += headerText(`/${offsets[i]}`, 1000 + i)));
  return latin1Encode(text);
}

function mutate(next: () => number, input: Uint8Array): Uint8Array {
  const bytes = input.slice();
  const kind = Math.floor(next() * 5);
  if (kind === 0) return bytes.subarray(0, Math.floor(next() * bytes.length));
  if (kind === 1) {
    for (let n = 1 + Math.floor(next() * 3); n > 0; n--) bytes[8 + Math.floor(next() * (bytes.length - 8))] = Math.floor(next() * 256);
    return bytes;
  }
  // Overwrite part of a header-looking field with interesting text.
  const values = ["9999999999", "abc", " 12", "", "0", "/99", "#1/99", "`\n", "/", "//", "/SYM64/", "  "];
  const text = values[Math.floor(next() * values.length)];
  const at = 8 + Math.floor(next() * Math.max(1, bytes.length - 8));
  bytes.set(latin1Encode(text).subarray(0, Math.max(0, bytes.length - at)), at);
  return bytes;
}

describe("archive readers: Wasm and TS engines agree (property)", () => {
  it("random archives, valid and mutated", () => {
    const next = rng(20261201);
    const wasm = makeEngine("wasm", 128);
    const ts = makeEngine("ts", 128);
    let errors = 0;
    let archives = 0;
    for (let round = 0; round < 1500; round++) {
      let valid: Uint8Array;
      let expected: { name: string; data: Uint8Array }[] | undefined;
      const shape = round % 6;
      if (shape === 4) valid = bsdArchive(next);
      else if (shape === 5) valid = thinArchive(next);
      else {
        const members = Array.from({ length: Math.floor(next() * 5) }, () => ({
          name: randomName(next),
          data: randomBytes(next, Math.floor(next() * 40)),
          symbols: next() < 0.5 ? null : Array.from({ length: Math.floor(next() * 3) }, () => randomName(next).replace(/\0/g, "")),
        }));
        valid = writeArchive(members);
        expected = members;
      }
      const input = round % 3 === 0 ? valid : mutate(next, valid);
      const a = outcome(() => readArchive(input, { engine: wasm }));
      const b = outcome(() => readArchive(input, { engine: ts }));
      expect(a, `round ${round}`).toEqual(b);
      if ("error" in (a as object)) errors++;
      else archives++;
      if (input === valid && expected !== undefined) {
        const read = readArchive(valid, { engine: ts });
        expect(read.members.map((m) => m.name)).toEqual(expected.map((m) => m.name));
        read.members.forEach((m, i) => expect(valid.subarray(m.dataOffset, m.dataOffset + m.size)).toEqual(expected![i].data));
      }
    }
    expect(errors).toBeGreaterThan(200);
    expect(archives).toBeGreaterThan(500);
  });

  it("random byte soups after a valid magic", () => {
    const next = rng(99);
    const wasm = makeEngine("wasm", 96);
    const ts = makeEngine("ts", 96);
    const alphabet = latin1Encode("0123456789 /#`\nab1");
    for (let round = 0; round < 800; round++) {
      const body = randomBytes(next, Math.floor(next() * 300), next() < 0.5 ? alphabet : undefined);
      const input = new Uint8Array(8 + body.length);
      input.set(latin1Encode(next() < 0.8 ? "!<arch>\n" : "!<thin>\n"));
      input.set(body, 8);
      expect(outcome(() => readArchive(input, { engine: wasm })), `round ${round}`).toEqual(outcome(() => readArchive(input, { engine: ts })));
    }
  });
});
