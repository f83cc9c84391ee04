// Bad packages: truncated in each layer, lying zip sizes, bombs, hostile names, links, huge tar sizes,
// corrupt streams, a damaged RPM header. Each gives a problem naming the member path and an offset; the
// other members are still reported; extract writes nothing outside --out-dir; nothing hangs.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gzipSync, deflateRawSync } from "node:zlib";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HOSTS, cpioOf, rpmOf, tarEntry, tarOf, tool, walkBytes } from "./build.js";

const app = readFileSync(join(HOSTS, "app"));
// The second member is incompressible, so a cut at 75-90% of any encoding lands in it, and large enough
// (512 KiB) that the first lies in complete blocks of zstd (128 KiB) and bzip2 -1 (100 kB).
const noise = Buffer.concat(Array.from({ length: 512 * 1024 / 32 }, (_, i) => createHash("sha256").update(String(i)).digest()));
const good = () => tarOf([tarEntry("first/app", app), tarEntry("second/app", noise)]);

function expectProblemsNamed(walked: Awaited<ReturnType<typeof walkBytes>>) {
  expect(walked.problems.length).toBeGreaterThan(0);
  for (const p of walked.problems) {
    expect(p.path.length).toBeGreaterThan(0);
    expect(Number.isInteger(p.offset)).toBe(true);
    expect(p.message.length).toBeGreaterThan(0);
  }
}

describe("truncation inside each layer", () => {
  const cases: [string, () => Uint8Array | undefined][] = [
    ["tar", good],
    ["tar.gz", () => gzipSync(good())],
    ["tar.xz", () => tool("xz", ["-c"], { input: good() })],
    ["tar.zst", () => tool("zstd", ["-q", "-c"], { input: good() })],
    ["tar.bz2", () => tool("bzip2", ["-1", "-c"], { input: good() })],
  ];
  it.each(cases)("%s cut in the second member: the first is reported, the cut one named", async (_label, make) => {
    const whole = make();
    if (whole === undefined) return;
    // Past the first member's bytes in every encoding (the second is identical, so the cut lies in it).
    for (const fraction of [0.75, 0.9]) {
      const walked = await walkBytes(whole.subarray(0, Math.floor(whole.length * fraction)), "cut");
      expect(walked.members.has("first/app")).toBe(true);
      expect((walked.members.get("first/app") as { bundles: unknown[] }).bundles.length).toBe(3);
      expect(walked.members.has("second/app")).toBe(false);
      expectProblemsNamed(walked);
    }
  });

  it("tar.bz2 through the TypeScript decoder (browsers; Node without the program), cut in the second member: the same", async () => {
    const whole = tool("bzip2", ["-1", "-c"], { input: good() });
    if (whole === undefined) return;
    for (const fraction of [0.75, 0.9]) {
      const walked = await walkBytes(whole.subarray(0, Math.floor(whole.length * fraction)), "cut", { ...process.env, OFFLOAD_KIT_BZIP2: "js" });
      expect((walked.members.get("first/app") as { bundles: unknown[] }).bundles.length).toBe(3);
      expect(walked.members.has("second/app")).toBe(false);
      expectProblemsNamed(walked);
      expect(walked.problems.map((p) => p.code)).toContain("DECODE_FAILED");
    }
  });

  it("a tarball inside a zip, cut inside the zip's member data, is a problem of that member", async () => {
    const inner = gzipSync(good());
    const zip = zipOf([["a.tar.gz", inner, 0], ["b/app", app, 8]]);
    // Damage a.tar.gz's stored bytes in the middle: its stream breaks, b/app is still read.
    const broken = Uint8Array.from(zip);
    broken.fill(0, 30 + "a.tar.gz".length + inner.length / 2, 30 + "a.tar.gz".length + inner.length / 2 + 64);
    const walked = await walkBytes(broken, "w.zip");
    expect((walked.members.get("b/app") as { bundles: unknown[] }).bundles.length).toBe(3);
    expect(walked.problems.some((p) => p.path.join("!").startsWith("w.zip!a.tar.gz"))).toBe(true);
  });

  it("a zip without its end record is one problem at the package", async () => {
    const zip = zipOf([["b/app", app, 8]]);
    const walked = await walkBytes(zip.subarray(0, zip.length - 10), "w.zip");
    expect(walked.problems).toHaveLength(1);
    expect(walked.problems[0]).toMatchObject({ code: "ZIP_NO_DIRECTORY", path: ["w.zip"] });
  });
});

/** A small zip writer: [name, data, method] with honest sizes unless patched afterwards. */
function zipOf(entries: readonly [string, Uint8Array, number][]): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data, method] of entries) {
    const stored = method === 8 ? deflateRawSync(data) : Buffer.from(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, stored);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + stored.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

describe("zip sizes that lie, bombs", () => {
  it("a member inflating to more or fewer bytes than declared is a problem; the others are read", async () => {
    for (const size of [100, app.length + 5000]) {
      const honest = zipOf([["honest/app", app, 8], ["liar.so", app, 8]]);
      // The second member's declared size (central directory) made to lie.
      const zip = Buffer.from(honest);
      const second = zip.indexOf(Buffer.from([0x50, 0x4b, 1, 2]), zip.indexOf(Buffer.from([0x50, 0x4b, 1, 2])) + 4);
      zip.writeUInt32LE(size, second + 24);
      const walked = await walkBytes(zip, "lie.zip");
      expect(walked.problems).toHaveLength(1);
      expect(walked.problems[0]!.path).toEqual(["lie.zip", "liar.so"]);
      expect(["PACKAGE_SIZE_MISMATCH", "ZIP_BAD_SIZE"]).toContain(walked.problems[0]!.code);
      expect((walked.members.get("honest/app") as { bundles: unknown[] }).bundles.length).toBe(3);
    }
  });

  it("a stored member whose sizes disagree, and a declared ratio beyond deflate's, are refused before decoding", async () => {
    const bomb = zipOf([["bomb.so", Buffer.alloc(4096), 8], ["honest/app", app, 0]]);
    const view = Buffer.from(bomb);
    // Declare 100 GiB uncompressed for the bomb (central directory, first entry) via zip64-less max.
    const central = view.indexOf(Buffer.from([0x50, 0x4b, 1, 2]));
    view.writeUInt32LE(0xfffffff0, central + 24);
    const walked = await walkBytes(view, "bomb.zip");
    expect(walked.problems.map((p) => p.code)).toEqual(["ZIP_BOMB"]);
    expect(walked.problems[0]!.path).toEqual(["bomb.zip", "bomb.so"]);
    expect((walked.members.get("honest/app") as { bundles: unknown[] }).bundles.length).toBe(3);
  });

  it("members that share their bytes (the overlapping-files bomb) are refused after the first", async () => {
    const zip = Buffer.from(zipOf([["a/app", app, 8], ["b/app", app, 8]]));
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 1, 2]));
    const second = zip.indexOf(Buffer.from([0x50, 0x4b, 1, 2]), central + 4);
    zip.writeUInt32LE(0, second + 42);
    // Same local header for both: b/app now points at a/app's bytes.
    const walked = await walkBytes(zip, "o.zip");
    expect(walked.members.has("a/app")).toBe(true);
    expect(walked.problems.map((p) => [p.code, p.path.join("!")])).toEqual([["ZIP_OVERLAP", "o.zip!b/app"]]);
  });

  it("a gzip bomb (64 MiB of zeros in ~64 KiB) is streamed through and walked, not refused", async () => {
    const bomb = gzipSync(tarOf([tarEntry("first/app", app), tarEntry("zeros", Buffer.alloc(64 * 1024 * 1024))]));
    expect(bomb.length).toBeLessThan(128 * 1024);
    const walked = await walkBytes(bomb, "z.tar.gz");
    expect(walked.problems).toEqual([]);
    expect([...walked.members.keys()]).toEqual(["first/app", "zeros"]);
  });
});

describe("tar headers", () => {
  it("a base-256 size beyond 2^53 is refused at its header", async () => {
    const raw = new Uint8Array(12);
    raw[0] = 0x80;
    raw[4] = 0x40;
    const walked = await walkBytes(tarOf([tarEntry("first/app", app), tarEntry("huge", new Uint8Array(0), { rawSize: raw })]), "h.tar");
    expect((walked.members.get("first/app") as { bundles: unknown[] }).bundles.length).toBe(3);
    expect(walked.problems.map((p) => p.code)).toEqual(["TAR_MALFORMED"]);
    expect(walked.problems[0]!.offset).toBeGreaterThan(0);
  });

  it("a size of 8 GiB in a short stream ends with a truncation problem, not a wait", async () => {
    const huge = tarEntry("huge.so", app, { size: 8 * 1024 * 1024 * 1024 - 1 });
    for (const bytes of [tarOf([tarEntry("first/app", app), huge]), gzipSync(tarOf([tarEntry("first/app", app), huge]))]) {
      const walked = await walkBytes(bytes, "h.tar");
      expect(walked.members.has("first/app")).toBe(true);
      expect(walked.problems.map((p) => p.code)).toEqual(["PACKAGE_TRUNCATED"]);
      expect(walked.problems[0]!.path).toEqual(["h.tar", "huge.so"]);
    }
  });

  it("symbolic and hard links are counted, never followed", async () => {
    const walked = await walkBytes(tarOf([
      tarEntry("a/app", app),
      tarEntry("a/sym", new Uint8Array(0), { type: "2", linkName: "/etc/passwd" }),
      tarEntry("a/hard", new Uint8Array(0), { type: "1", linkName: "a/app" }),
    ]), "l.tar");
    expect([...walked.members.keys()]).toEqual(["a/app"]);
    expect(walked.walk!.links).toBe(2);
  });

  it("garbage after a tar.gz's end, and corrupt xz/zstd/bzip2/gzip data, are decode problems after the members before them", async () => {
    // node:zlib refuses data after the gzip stream (gzip(1) warns and ignores it): a problem, not silence.
    const tail = await walkBytes(Buffer.concat([gzipSync(good()), Buffer.from("garbage")]), "g.tar.gz");
    expect(tail.members.has("first/app")).toBe(true);
    expectProblemsNamed(tail);
    for (const name of ["xz", "zstd", "bzip2", "gzip"]) {
      const compressed = tool(name, name === "zstd" ? ["-q", "-c"] : name === "bzip2" ? ["-1", "-c"] : ["-c"], { input: good() });
      if (compressed === undefined) continue;
      const damaged = Uint8Array.from(compressed);
      for (let i = Math.floor(damaged.length * 0.6); i < Math.floor(damaged.length * 0.6) + 32; i++) damaged[i] ^= 0x5a;
      const walked = await walkBytes(damaged, `d.tar.${name}`);
      expectProblemsNamed(walked);
      expect(walked.members.has("first/app")).toBe(true);
    }
  });
});

describe("RPM headers", () => {
  it("a damaged header is a problem at its offset; a good one is read", async () => {
    const cpio = cpioOf([["./usr/lib/app", app]]);
    const rpm = rpmOf(gzipSync(cpio), "gzip");
    expect((await walkBytes(rpm, "r.rpm")).members.has("usr/lib/app")).toBe(true);
    const damaged = Buffer.from(rpm);
    damaged.writeUInt32BE(0x7fffffff, 96 + 16 + 12);
    const walked = await walkBytes(damaged, "r.rpm");
    expect(walked.problems).toHaveLength(1);
    expect(walked.problems[0]).toMatchObject({ code: "RPM_BAD_HEADER", path: ["r.rpm"] });
    expect(walked.problems[0]!.offset).toBeGreaterThanOrEqual(96);
  });
});

describe("extract: hostile member names stay inside --out-dir", () => {
  it("../, absolute paths, backslashes and NUL are flattened into one file name", async () => {
    const dir = scratchDir("offload-kit-hostile-");
    const out = join(dir, "out");
    const names = ["../../escape/app", "/abs/app", "back\\slash\\..\\app", "nul\u0000name/app"];
    writeFileSync(join(dir, "evil.tar"), tarOf(names.map((n) => tarEntry(n, app))));
    const run = await runInDir(dir, (io) => runOffloadKit("offload-kit", ["extract", "--out-dir=out", "evil.tar"], io));
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const written = readdirSync(out);
    // app holds 9 entries (3 bundles); each member's are written under its flattened name.
    expect(written.length).toBe(names.length * 9);
    for (const flat of ["evil.tar!.._.._escape_app", "evil.tar!abs_app", "evil.tar!back_slash_.._app", "evil.tar!nul"]) {
      expect(written.filter((n) => n.startsWith(`${flat}-`))).toHaveLength(9);
    }
    for (const name of written) {
      expect(name).toMatch(/^evil\.tar!/);
      expect(name).not.toMatch(/[/\\\0]/);
    }
    expect(existsSync(join(dir, "escape"))).toBe(false);
    expect(existsSync(join(dirname(dir), "escape"))).toBe(false);
    expect(existsSync("/abs")).toBe(false);
  });
});

describe("a stream whose check fails at its end (found by `npm run fuzz -- --parser walk`)", () => {
  it("tar.gz with a bad CRC: every member before the trailer is reported, the stream's failure is a problem", async () => {
    // Small enough to be one write and one zlib call: the call that read the trailer also decoded everything, and
    // node:zlib drops a failing call's output, so all members were lost before the trailer was fed on its own.
    const gz = Buffer.from(gzipSync(tarOf([tarEntry("first/app", app), tarEntry("doc/readme", Buffer.from("text\n"))])));
    gz[gz.length - 8]! ^= 0xff;
    const walked = await walkBytes(gz, "crc.tar.gz");
    expect((walked.members.get("first/app") as { bundles: unknown[] }).bundles.length).toBe(3);
    expect(walked.members.has("doc/readme")).toBe(true);
    expect(walked.problems.map((p) => [p.path, p.code])).toEqual([[["crc.tar.gz"], "DECODE_FAILED"]]);
    expect(walked.problems[0]!.message).toContain("incorrect data check");
  });

  it("a source answering a few bytes per read gives the decoder the same chunks as one answering all", async () => {
    const { sourceChunks } = await import("../../src/packages/chunks.js");
    const bytes = new Uint8Array(3000).map((_, i) => i & 255);
    const trickle = { size: bytes.length, read: (dest: Uint8Array, at: number) => {
      const n = Math.min(7, dest.length, bytes.length - at);
      dest.set(bytes.subarray(at, at + n));
      return n;
    } };
    const chunks: Uint8Array[] = [];
    for await (const chunk of sourceChunks(trickle)) chunks.push(chunk);
    expect(chunks.map((c) => c.length)).toEqual([3000]);
    expect(Buffer.concat(chunks).equals(Buffer.from(bytes))).toBe(true);
  });
});

describe("a corrupt stream inside a corrupt stream (found by `npm run fuzz -- --parser walk`, case 24536)", () => {
  it("the failure reported is the first in stream order, the same every time", async () => {
    const inner = Buffer.from(gzipSync(good()));
    inner.fill(0x5a, inner.length >> 1, (inner.length >> 1) + 64);
    const outer = Buffer.from(gzipSync(inner));
    outer[outer.length - 8]! ^= 0xff;
    const seen = new Set<string>();
    for (let run = 0; run < 6; run++) {
      const walked = await walkBytes(outer, "gg.tar.gz");
      expect(walked.members.has("first/app")).toBe(true);
      seen.add(walked.problems.map((p) => `${p.path.join("!")} ${p.code} ${p.message}`).join("\n"));
    }
    // One answer, however the thread pool schedules the two decoders (before, either stream's error could win).
    expect(seen.size, [...seen].join("\n---\n")).toBe(1);
    expect([...seen][0]).toContain("DECODE_FAILED");
  });
});
