// Issue 26 item 2: prune, compress and decompress of a .deb write a .deb that dpkg accepts. A package built by
// dpkg-deb --build (xz, gzip, zstd and no compression) holding two fat binaries, a GNU long-named object, a text
// file and a symlink is pruned; dpkg-deb --info and -x read it, md5sum -c of its md5sums passes over the unpacked
// tree, Installed-Size is lowered by each edited file's change in KiB rounded up, the edited files are the
// single-file prune's bytes, and every other byte is kept: the ar headers but for their size, debian-binary,
// every tar header but the edited files' size and checksum, every other body, the tars' trailing zeros, and
// control.tar's other members. Debian's own librocrand1 (apt-get download) too, when apt can fetch it.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { download } from "./apt.js";
import { HOSTS, haveTools } from "./build.js";

const dir = scratchDir("offload-kit-deb-write-");
const tools = haveTools("dpkg-deb", "md5sum", "ar", "xz", "zstd");

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

const LONG = "opt/a/very/long/directory/name/that/makes/the/path/longer/than/one/hundred/bytes/for/ustar/and/pax/fat.o";
const PAYLOADS: Record<string, string> = { "usr/lib/app": "app", "usr/lib/libboth.a": "libboth.a", [LONG]: "fat.o" };

/** A package tree with DEBIAN/control (Installed-Size as dpkg-gencontrol counts it) and DEBIAN/md5sums. */
function stagePackage(root: string): void {
  for (const [path, fixture] of Object.entries(PAYLOADS)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    copyFileSync(join(HOSTS, fixture), join(root, path));
  }
  writeFileSync(join(root, "usr/lib/readme.txt"), "no device code here\n");
  symlinkSync("app", join(root, "usr/lib/app.link"));
  const files = [...Object.keys(PAYLOADS), "usr/lib/readme.txt"].sort();
  mkdirSync(join(root, "DEBIAN"));
  writeFileSync(join(root, "DEBIAN/md5sums"), execFileSync("md5sum", files, { cwd: root }));
  const kib = files.reduce((n, f) => n + Math.ceil(statSync(join(root, f)).size / 1024), 0);
  writeFileSync(join(root, "DEBIAN/control"), `Package: t\nVersion: 1.0\nArchitecture: amd64\nMaintainer: T <t@example.com>\nInstalled-Size: ${kib + 8}\nDescription: a test\n`);
}

interface ArMember { name: string; header: Buffer; data: Buffer }

function arMembers(bytes: Buffer): ArMember[] {
  expect(bytes.subarray(0, 8).toString("latin1")).toBe("!<arch>\n");
  const out: ArMember[] = [];
  for (let at = 8; at < bytes.length;) {
    const header = bytes.subarray(at, at + 60);
    const size = Number(header.subarray(48, 58).toString("latin1").trim());
    out.push({ name: header.subarray(0, 16).toString("latin1").trim(), header, data: bytes.subarray(at + 60, at + 60 + size) });
    at += 60 + size + (size % 2);
  }
  return out;
}

/** A GNU tar's entries (header blocks, long-name records included, and body with padding), and what follows the last. */
function tarEntries(tar: Buffer): { entries: { name: string; headers: Buffer; last: Buffer; body: Buffer }[]; trailer: Buffer } {
  const entries: { name: string; headers: Buffer; last: Buffer; body: Buffer }[] = [];
  let at = 0;
  let start = 0;
  let longName: string | undefined;
  while (at + 512 <= tar.length && !tar.subarray(at, at + 512).every((b) => b === 0)) {
    const block = tar.subarray(at, at + 512);
    const size = parseInt(block.subarray(124, 136).toString("latin1").replace(/[\0 ]/g, "") || "0", 8);
    const flag = String.fromCharCode(block[156]!);
    const padded = Math.ceil(size / 512) * 512;
    if (flag === "L") {
      longName = tar.subarray(at + 512, at + 512 + size).toString("utf8").replace(/\0+$/, "");
      at += 512 + padded;
      continue;
    }
    const name = longName ?? block.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
    longName = undefined;
    const bodySize = flag === "0" || flag === "\0" ? padded : 0;
    entries.push({ name, headers: tar.subarray(start, at), last: block, body: tar.subarray(at + 512, at + 512 + bodySize) });
    at += 512 + bodySize;
    start = at;
  }
  return { entries, trailer: tar.subarray(at) };
}

function decode(member: ArMember): Buffer {
  const tool = member.name.endsWith(".xz") ? ["xz", "-dc"] : member.name.endsWith(".gz") ? ["gzip", "-dc"] : member.name.endsWith(".zst") ? ["zstd", "-dcq"] : undefined;
  return tool === undefined ? member.data : execFileSync(tool[0]!, tool.slice(1), { input: member.data, maxBuffer: 1 << 30 });
}

/** Every byte of the two tars equal but the edited entries' size, checksum and body (and the named control members). */
function expectTarKept(before: Buffer, after: Buffer, edited: ReadonlySet<string>): void {
  const a = tarEntries(before);
  const b = tarEntries(after);
  expect(b.entries.map((e) => e.name)).toEqual(a.entries.map((e) => e.name));
  a.entries.forEach((x, i) => {
    const y = b.entries[i]!;
    expect(y.headers.equals(x.headers), x.name).toBe(true);
    if (!edited.has(x.name)) {
      expect(y.last.equals(x.last), x.name).toBe(true);
      expect(y.body.equals(x.body), x.name).toBe(true);
    } else {
      // Only the size (124..136) and checksum (148..156) fields differ.
      const strip = (h: Buffer) => Buffer.concat([h.subarray(0, 124), h.subarray(136, 148), h.subarray(156)]);
      expect(strip(y.last).equals(strip(x.last)), x.name).toBe(true);
    }
  });
  expect(b.trailer.equals(a.trailer)).toBe(true);
}

function control(deb: string, field: string): string {
  return execFileSync("dpkg-deb", ["-f", deb, field], { cwd: dir, encoding: "utf8" }).trim();
}

/** dpkg-deb -x and -e, then md5sum -c of its md5sums in the unpacked tree (throws when a line fails). */
function unpackAndCheck(deb: string, into: string): string {
  execFileSync("dpkg-deb", ["--info", deb], { cwd: dir });
  execFileSync("dpkg-deb", ["-x", deb, into], { cwd: dir });
  execFileSync("dpkg-deb", ["-e", deb, `${into}.control`], { cwd: dir });
  return execFileSync("md5sum", ["-c", join(dir, `${into}.control`, "md5sums")], { cwd: join(dir, into), encoding: "utf8" });
}

describe.skipIf(!tools).each([
  ["xz", "data.tar.xz"],
  ["gzip", "data.tar.gz"],
  ["zstd", "data.tar.zst"],
  ["none", "data.tar"],
])("a .deb whose data is %s, in and out", (compressor, dataName) => {
  const deb = `t-${compressor}.deb`;
  const root = join(dir, `root-${compressor}`);
  if (tools) {
    stagePackage(root);
    execFileSync("dpkg-deb", ["--build", `-Z${compressor}`, "--root-owner-group", root, deb], { cwd: dir, stdio: "pipe" });
  }

  it("prune -o: dpkg-deb reads it, md5sum -c passes, Installed-Size as dpkg-gencontrol counts, every other byte kept", async () => {
    const out = `out-${compressor}.deb`;
    const run = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", out, deb);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(new RegExp(`^${deb}: deb package, \\d+ members, 3 with device code, \\d changed, control\\.tar(\\.\\w+)?:md5sums rewritten, \\d+ -> \\d+ bytes, saves \\d+ .* -> ${out}$`, "m"));
    expect(unpackAndCheck(out, `x-${compressor}`)).toMatch(/usr\/lib\/app: OK\n/);

    // The edited files are the single-file prune's bytes.
    const edited = new Set<string>();
    let kibSaved = 0;
    for (const [path, fixture] of Object.entries(PAYLOADS)) {
      const single = `single-${compressor}-${fixture}`;
      const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", single, join(HOSTS, fixture));
      expect(r.code).toBe(0);
      const now = readFileSync(join(dir, `x-${compressor}`, path));
      expect(now.equals(readFileSync(join(dir, single))), path).toBe(true);
      const old = statSync(join(HOSTS, fixture)).size;
      if (now.length !== old) edited.add(`./${path}`);
      kibSaved += Math.ceil(old / 1024) - Math.ceil(now.length / 1024);
    }
    expect(edited.size).toBeGreaterThan(0);
    expect(Number(control(out, "Installed-Size"))).toBe(Number(control(deb, "Installed-Size")) - kibSaved);

    // ar: the same members in order, headers equal but for the size, debian-binary as it was, the same compressor.
    const a = arMembers(readFileSync(join(dir, deb)));
    const b = arMembers(readFileSync(join(dir, out)));
    expect(b.map((m) => m.name)).toEqual(a.map((m) => m.name));
    expect(b[2]!.name).toBe(dataName);
    a.forEach((m, i) => {
      const h = b[i]!.header;
      expect(Buffer.concat([h.subarray(0, 48), h.subarray(58)]).equals(Buffer.concat([m.header.subarray(0, 48), m.header.subarray(58)])), m.name).toBe(true);
    });
    expect(b[0]!.data.equals(a[0]!.data)).toBe(true);
    expect(b[2]!.data.subarray(0, 4).equals(a[2]!.data.subarray(0, 4))).toBe(true);

    // data.tar: every byte but the edited entries'; control.tar: every member but md5sums and control.
    expectTarKept(decode(a[2]!), decode(b[2]!), edited);
    expectTarKept(decode(a[1]!), decode(b[1]!), new Set(["./md5sums", "./control"]));
    const md5Before = readFileSync(join(root, "DEBIAN/md5sums"), "utf8").split("\n");
    const md5After = readFileSync(join(dir, `x-${compressor}.control`, "md5sums"), "utf8").split("\n");
    md5Before.forEach((line, i) => expect(md5After[i] === line, line).toBe(!edited.has(`./${line.slice(34)}`)));
  }, HANG_MS);

  it("--dry-run writes nothing and says the size the real run writes", async () => {
    const names = readdirSync(dir).sort();
    const dry = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--dry-run", "--json", deb)).stdout);
    expect(readdirSync(dir).sort()).toEqual(names);
    const real = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--json", "-o", `again-${compressor}.deb`, deb)).stdout);
    expect(dry.packages[0]).toMatchObject({ input: deb, output: null, withDeviceCode: 3 });
    expect(dry.packages[0].outputSize).toBe(statSync(join(dir, `again-${compressor}.deb`)).size);
    expect(real.packages[0].outputSize).toBe(dry.packages[0].outputSize);
  }, HANG_MS);

  it("--in-place replaces the package with the one -o writes; a member left without device code, or a selection matching nothing, writes nothing", async () => {
    mkdirSync(join(dir, `in-${compressor}`));
    const inPlace = join(`in-${compressor}`, deb);
    copyFileSync(join(dir, deb), join(dir, inPlace));
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--in-place", inPlace);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, inPlace)).equals(readFileSync(join(dir, `out-${compressor}.deb`)))).toBe(true);
    expect(readdirSync(join(dir, `in-${compressor}`))).toEqual([deb]);
    const none = await kit("prune", "--keep=gfx1100", "-o", `none-${compressor}.deb`, deb);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(new RegExp(`${deb}!\\S+ .*keeps none of the bundle's device entries`));
    const empty = await kit("prune", "--keep=gfx1100", "--allow-empty", "-o", `none-${compressor}.deb`, deb);
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toMatch(/--keep=gfx1100 matches no entry/);
    expect(readdirSync(dir)).not.toContain(`none-${compressor}.deb`);
  }, HANG_MS);

  it("compress then decompress: a .deb each time that dpkg-deb reads and md5sum -c passes", async () => {
    const c = await kit("compress", "-o", `c-${compressor}.deb`, deb);
    expect([c.code, c.stderr]).toEqual([0, ""]);
    expect(unpackAndCheck(`c-${compressor}.deb`, `xc-${compressor}`)).toMatch(/usr\/lib\/app: OK\n/);
    const d = await kit("decompress", "-o", `d-${compressor}.deb`, `c-${compressor}.deb`);
    expect([d.code, d.stderr]).toEqual([0, ""]);
    expect(unpackAndCheck(`d-${compressor}.deb`, `xd-${compressor}`)).toMatch(/usr\/lib\/app: OK\n/);
    // The single-file commands give the same bytes.
    expect((await kit("compress", "-o", `c-app-${compressor}`, join(HOSTS, "app"))).code).toBe(0);
    expect(readFileSync(join(dir, `xc-${compressor}`, "usr/lib/app")).equals(readFileSync(join(dir, `c-app-${compressor}`)))).toBe(true);
  }, HANG_MS);
});

describe.skipIf(!tools)("Debian's librocrand1", () => {
  it("prune --keep=gfx90a -o: dpkg-deb -x and md5sum -c pass; the library is the single-file prune's; Installed-Size lowered", async () => {
    const deb = download(dir, "librocrand1");
    if (deb === undefined) return;
    const run = await kit("prune", "--keep=gfx90a", "-o", "rocrand-out.deb", deb);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(unpackAndCheck("rocrand-out.deb", "x-rocrand")).toMatch(/librocrand\.so\.1\.1: OK\n/);
    const library = "usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
    execFileSync("dpkg-deb", ["-x", deb, "x-rocrand-in"], { cwd: dir });
    expect((await kit("prune", "--keep=gfx90a", "-o", "rocrand-single.so", join("x-rocrand-in", library))).code).toBe(0);
    const now = readFileSync(join(dir, "x-rocrand", library));
    expect(now.equals(readFileSync(join(dir, "rocrand-single.so")))).toBe(true);
    const old = statSync(join(dir, "x-rocrand-in", library)).size;
    expect(Number(control("rocrand-out.deb", "Installed-Size"))).toBe(Number(control(deb, "Installed-Size")) - (Math.ceil(old / 1024) - Math.ceil(now.length / 1024)));
    const a = arMembers(readFileSync(join(dir, deb)));
    const b = arMembers(readFileSync(join(dir, "rocrand-out.deb")));
    expect(b.map((m) => m.name)).toEqual(a.map((m) => m.name));
    expectTarKept(decode(a[2]!), decode(b[2]!), new Set([`./${library}`]));
    expectTarKept(decode(a[1]!), decode(b[1]!), new Set(["./md5sums", "./control"]));
  }, HANG_MS);
});
