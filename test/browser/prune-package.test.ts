// Issue 26 item 5: "download, pruned for GPU" of a dropped package gives the rewritten package. The page's writers
// (src/browser/prune-package/) run here in Node with the page's own codecs and decoders (fflate, hash-wasm, libzstd's
// WebAssembly build, DecompressionStream, xz-decompress, our bzip2 decoder; our xz and bzip2 encoders), on packages
// built by the ecosystems' tools: dpkg-deb (gzip, xz, zstd, none), tar with gzip/xz/zstd/bzip2, conda packages as
// conda-build and conda-package-handling write them (test/packages/conda_package.py). The output, put together from
// the reply's parts as the page does (ranges of the input, bytes made in the worker), is judged two ways:
//  - against `offload-kit prune -o` of the same package: the same members in the same order, and every tar inside
//    decoding to the CLI's tar byte for byte (so the edited files are the single-file prune's, every other tar byte
//    is kept, md5sums/Installed-Size/paths.json rewritten the same); only the compressed bytes differ (other encoders);
//  - by the ecosystem's tools: dpkg-deb --info/-x and md5sum -c; tar -t and the compressor's own -t; conda's check
//    (every paths.json row recomputed) and conda-package-handling's `cph x`.
// Refusals say what the CLI says, or why the page does not write the kind (RPMs, images).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { prunePackage } from "../../src/browser/prune-package/index.js";
import type { PruneReply } from "../../src/browser/protocol.js";
import { loadBrowserCodecs } from "../../src/compress/browser.js";
import type { Codecs } from "../../src/compress/codecs.js";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { nativeTool } from "../native.js";
import { cpioOf, dockerImage, haveTools, rpmOf, stage, tarEntry, tarOf } from "../packages/build.js";

const dir = scratchDir("offload-kit-page-packages-");
const tools = haveTools("dpkg-deb", "md5sum", "tar", "gzip", "xz", "zstd", "bzip2", "python3");
const BUILDER = new URL("../packages/conda_package.py", import.meta.url).pathname;
const KEEP = "gfx906";
let codecs: Codecs;

beforeAll(async () => {
  codecs = await loadBrowserCodecs();
});

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

/** The output as the page puts it together (src/browser/client.ts prunedBlob): ranges of the input, zeros, bytes. */
function assemble(input: Uint8Array, reply: PruneReply): Buffer {
  const out = Buffer.concat(reply.parts.map((p) => ("bytes" in p ? p.bytes : "zeros" in p ? new Uint8Array(p.zeros) : input.subarray(p.offset, p.offset + p.size))));
  expect(out.length).toBe(reply.outputSize);
  return out;
}

async function pagePrune(path: string, keep = KEEP): Promise<{ reply: PruneReply; bytes: Buffer }> {
  const input = readFileSync(path);
  const reply = await prunePackage(bytesSource(input), path.slice(path.lastIndexOf("/") + 1), [keep], codecs);
  return { reply, bytes: assemble(input, reply) };
}

async function cliPrune(path: string, out: string, keep = KEEP): Promise<Buffer> {
  const r = await kit("prune", `--keep=${keep}`, "-o", out, path);
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(isAbsolute(out) ? out : join(dir, out));
}

/** A compressed stream decoded by its own program (gzip/xz/zstd/bzip2 -dc), or the bytes when plain. */
function decoded(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes);
  const program = b[0] === 0x1f && b[1] === 0x8b ? "gzip" : b.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) ? "xz"
    : b.length >= 4 && b.readUInt32LE(0) === 0xfd2fb528 ? "zstd" : b.subarray(0, 3).toString("latin1") === "BZh" ? "bzip2" : undefined;
  if (program === undefined) return b;
  // The program's own test first: the stream is whole and its checks (CRC, checksum) hold.
  execFileSync(program, ["-t"], { input: b });
  return execFileSync(program, ["-dc"], { input: b, maxBuffer: 1 << 30 });
}

function arMembers(bytes: Buffer): { name: string; header: Buffer; data: Buffer }[] {
  expect(bytes.subarray(0, 8).toString("latin1")).toBe("!<arch>\n");
  const out: { name: string; header: Buffer; data: Buffer }[] = [];
  for (let at = 8; at < bytes.length;) {
    const header = bytes.subarray(at, at + 60);
    const size = Number(header.subarray(48, 58).toString("latin1").trim());
    out.push({ name: header.subarray(0, 16).toString("latin1").trim(), header, data: bytes.subarray(at + 60, at + 60 + size) });
    at += 60 + size + (size % 2);
  }
  return out;
}

/** A package tree with DEBIAN/control (Installed-Size as dpkg-gencontrol counts it) and DEBIAN/md5sums. */
function debTree(): string {
  const root = stage(join(dir, "deb"));
  const files = execFileSync("find", [".", "-type", "f"], { cwd: root, encoding: "utf8" }).trim().split("\n").map((f) => f.slice(2)).sort();
  mkdirSync(join(root, "DEBIAN"));
  writeFileSync(join(root, "DEBIAN/md5sums"), execFileSync("md5sum", files, { cwd: root }));
  const kib = files.reduce((n, f) => n + Math.ceil(statSync(join(root, f)).size / 1024), 0);
  writeFileSync(join(root, "DEBIAN/control"), `Package: t\nVersion: 1.0\nArchitecture: amd64\nMaintainer: T <t@example.com>\nInstalled-Size: ${kib + 8}\nDescription: a test\n`);
  return root;
}

describe.skipIf(!tools)("the page writes packages back as their kinds (src/browser/prune-package/)", () => {
  let debRoot: string;
  let tarRoot: string;
  beforeAll(() => {
    debRoot = debTree();
    tarRoot = stage(join(dir, "tarball"));
    execFileSync("python3", [BUILDER, stage(join(dir, "conda")), "hipapp-1.0-0", dir]);
  });

  for (const compressor of ["xz", "gzip", "zstd", "none"]) {
    it(`a .deb (data.tar ${compressor}): the CLI's package, member for member; dpkg-deb and md5sum -c accept it`, async () => {
      const deb = join(dir, `t-${compressor}.deb`);
      execFileSync("dpkg-deb", ["--root-owner-group", `-Z${compressor}`, "--build", debRoot, deb], { stdio: "pipe" });
      const page = await pagePrune(deb);
      expect(page.reply.changed).toBe(true);
      expect(page.reply.container).toBe("deb package");
      const cli = await cliPrune(deb, `cli-${compressor}.deb`);
      const [pm, cm] = [arMembers(page.bytes), arMembers(cli)];
      expect(pm.map((m) => m.name)).toEqual(cm.map((m) => m.name));
      pm.forEach((m, i) => {
        // Each ar header as dpkg-deb wrote it but for the size; every tar decodes to the CLI's tar, byte for byte.
        expect(m.header.subarray(0, 48).equals(cm[i]!.header.subarray(0, 48)), m.name).toBe(true);
        expect(decoded(m.data).equals(decoded(cm[i]!.data)), m.name).toBe(true);
      });
      // The untouched member is a range of the input; the data.tar holds less than before (the package itself may
      // not be smaller on a sample this small: our xz encoder's ratio is below xz -6's, docs/compression.md).
      expect(page.reply.parts.some((p) => "offset" in p)).toBe(true);
      const dataOf = (bytes: Buffer) => decoded(arMembers(bytes).find((m) => m.name.startsWith("data.tar"))!.data);
      expect(dataOf(page.bytes).length).toBeLessThan(dataOf(readFileSync(deb)).length);
      const pagePath = join(dir, `page-${compressor}.deb`);
      writeFileSync(pagePath, page.bytes);
      expect(execFileSync("dpkg-deb", ["--info", pagePath], { encoding: "utf8" })).toMatch(/Installed-Size: \d+/);
      const unpacked = join(dir, `page-${compressor}-x`);
      execFileSync("dpkg-deb", ["-x", pagePath, unpacked]);
      execFileSync("dpkg-deb", ["-e", pagePath, join(unpacked, "DEBIAN")]);
      execFileSync("md5sum", ["--quiet", "-c", "DEBIAN/md5sums"], { cwd: unpacked });
    }, HANG_MS);
  }

  for (const [compressor, suffix, make] of [
    [undefined, "tar", undefined], ["gzip", "tar.gz", ["gzip", "-9"]], ["xz", "tar.xz", ["xz", "-6"]], ["zstd", "tar.zst", ["zstd", "-3"]], ["bzip2", "tar.bz2", ["bzip2", "-9"]],
  ] as const) {
    it(`a tarball (${suffix}): decodes to the CLI's tar, byte for byte; tar and ${compressor ?? "tar"} accept it`, async () => {
      const plain = execFileSync("tar", ["-C", tarRoot, "--sort=name", "-cf", "-", "."], { maxBuffer: 1 << 28 });
      const path = join(dir, `code.${suffix}`);
      writeFileSync(path, make === undefined ? plain : execFileSync(make[0], [...make.slice(1), "-c"], { input: plain, maxBuffer: 1 << 28 }));
      const page = await pagePrune(path);
      expect(page.reply.changed).toBe(true);
      const cli = await cliPrune(path, `cli-code.${suffix}`);
      expect(decoded(page.bytes).equals(decoded(cli))).toBe(true);
      if (compressor === undefined) {
        // An uncompressed tar is not held: what did not change is ranges of the File, only the edited file is bytes.
        const big = join(dir, "big.tar");
        writeFileSync(big, tarOf([tarEntry("share/data.bin", Buffer.alloc(2 << 20, 7)), tarEntry("lib/app", readFileSync(join(tarRoot, "usr/lib/app")))]));
        const bigPage = await pagePrune(big);
        expect(bigPage.bytes.equals(await cliPrune(big, "cli-big.tar"))).toBe(true);
        const held = bigPage.reply.parts.reduce((n, p) => n + ("bytes" in p ? p.bytes.length : 0), 0);
        const ranged = bigPage.reply.parts.reduce((n, p) => n + ("offset" in p ? p.size : 0), 0);
        expect(held).toBeLessThan(readFileSync(join(tarRoot, "usr/lib/app")).length + 2048);
        expect(ranged).toBeGreaterThan(2 << 20);
      }
      const pagePath = join(dir, `page-code.${suffix}`);
      writeFileSync(pagePath, page.bytes);
      const listed = execFileSync("tar", ["-tf", pagePath], { encoding: "utf8" });
      expect(listed).toContain("usr/lib/app");
    }, HANG_MS);
  }

  it("a .conda: the same members, each tar decoding to the CLI's; conda's check and cph x accept it", async () => {
    const path = join(dir, "hipapp-1.0-0.conda");
    const page = await pagePrune(path);
    expect(page.reply.changed).toBe(true);
    expect(page.reply.container).toBe("conda package");
    const cliOut = join(dir, "cli", "hipapp-1.0-0.conda");
    mkdirSync(join(dir, "cli"), { recursive: true });
    const cli = await cliPrune(path, cliOut);
    const pageDir = join(dir, "page");
    mkdirSync(pageDir, { recursive: true });
    const pagePath = join(pageDir, "hipapp-1.0-0.conda");
    writeFileSync(pagePath, page.bytes);
    const members = (p: string) => JSON.parse(execFileSync("python3", ["-c", "import json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nprint(json.dumps([[i.filename,i.compress_type,z.read(i).hex()] for i in z.infolist()]))", p], { encoding: "utf8", maxBuffer: 1 << 28 })) as [string, number, string][];
    const [pm, cm] = [members(pagePath), members(cliOut)];
    expect(pm.map((m) => [m[0], m[1]])).toEqual(cm.map((m) => [m[0], m[1]]));
    pm.forEach((m, i) => expect(decoded(Buffer.from(m[2], "hex")).equals(decoded(Buffer.from(cm[i]![2], "hex"))), m[0]).toBe(true));
    expect(cli.length).toBeGreaterThan(0);
    const checked = JSON.parse(execFileSync("python3", [BUILDER, "--check", pagePath], { encoding: "utf8", maxBuffer: 1 << 28 })) as { bad: string[]; rowsChecked: number };
    expect(checked.bad).toEqual([]);
    expect(checked.rowsChecked).toBeGreaterThan(0);
    const cph = nativeTool("cph");
    if (cph !== undefined) {
      const r = spawnSync(cph, ["x", pagePath, "--dest", join(pageDir, "x")], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(readdirSync(join(pageDir, "x"))).toContain("info");
    }
  }, HANG_MS);

  it("a conda .tar.bz2: decodes to the CLI's tar (paths.json before the files it describes, rewritten); conda's check accepts it", async () => {
    const path = join(dir, "hipapp-1.0-0.tar.bz2");
    const page = await pagePrune(path);
    expect(page.reply.changed).toBe(true);
    const cli = await cliPrune(path, "cli-hipapp-1.0-0.tar.bz2");
    expect(decoded(page.bytes).equals(decoded(cli))).toBe(true);
    const pageDir = join(dir, "page-bz2");
    mkdirSync(pageDir, { recursive: true });
    writeFileSync(join(pageDir, "hipapp-1.0-0.tar.bz2"), page.bytes);
    const checked = JSON.parse(execFileSync("python3", [BUILDER, "--check", join(pageDir, "hipapp-1.0-0.tar.bz2")], { encoding: "utf8", maxBuffer: 1 << 28 })) as { bad: string[]; rowsChecked: number };
    expect(checked.bad).toEqual([]);
  }, HANG_MS);

  it("packages inside packages (a wheel and a .deb in a tarball, that tarball in a zip): each written by its own writer, at every level, as the CLI writes them", async () => {
    const wheel = join(dir, "app-1.0-py3-none-any.whl");
    execFileSync("python3", ["-c", [
      "import hashlib,base64,os,sys,zipfile",
      "root,out=sys.argv[1],sys.argv[2]",
      "z=zipfile.ZipFile(out,'w',zipfile.ZIP_DEFLATED)",
      "rows=[]",
      "for rel in ['usr/lib/app','usr/lib/libboth.a','usr/lib/readme.txt']:",
      "  b=open(os.path.join(root,rel),'rb').read(); z.writestr('app/'+rel,b)",
      "  rows.append('app/%s,sha256=%s,%d'%(rel,base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode(),len(b)))",
      "z.writestr('app-1.0.dist-info/RECORD','\\n'.join(rows+['app-1.0.dist-info/RECORD,,'])+'\\n')",
      "z.close()",
    ].join("\n"), tarRoot, wheel]);
    const deb = join(dir, "nested-none.deb");
    execFileSync("dpkg-deb", ["--root-owner-group", "-Znone", "--build", debRoot, deb], { stdio: "pipe" });
    const inner = tarOf([tarEntry("wheels/app-1.0-py3-none-any.whl", readFileSync(wheel)), tarEntry("debs/t.deb", readFileSync(deb)), tarEntry("readme", Buffer.from("no device code\n"))]);
    const tarball = join(dir, "bundle.tar.gz");
    writeFileSync(tarball, execFileSync("gzip", ["-9", "-c"], { input: inner }));

    // Two levels: the tarball's wheel and .deb are the CLI's, byte for byte (zlib's deflate at the same level, an
    // uncompressed data.tar), so the decoded tarball is too.
    const page = await pagePrune(tarball);
    expect(page.reply.changed).toBe(true);
    const cli = await cliPrune(tarball, "cli-bundle.tar.gz");
    expect(decoded(page.bytes).equals(decoded(cli))).toBe(true);
    const single = await cliPrune(join(tarRoot, "usr/lib/app"), "cli-app");
    const x = join(dir, "nested-x");
    mkdirSync(x);
    writeFileSync(join(x, "bundle.tar.gz"), page.bytes);
    execFileSync("tar", ["-xzf", "bundle.tar.gz"], { cwd: x });
    // The wheel inside: its RECORD checked by Python (every row's hash and size), its library the single-file prune's.
    execFileSync("python3", ["-c", [
      "import base64,csv,hashlib,io,sys,zipfile",
      "z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None",
      "for row in csv.reader(io.TextIOWrapper(z.open('app-1.0.dist-info/RECORD'))):",
      "  if not row[1]: continue",
      "  b=z.read(row[0]); assert row[1]=='sha256='+base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode(), row; assert int(row[2])==len(b), row",
      "open(sys.argv[2],'wb').write(z.read('app/usr/lib/app'))",
    ].join("\n"), join(x, "wheels/app-1.0-py3-none-any.whl"), join(x, "wheel-app")]);
    expect(readFileSync(join(x, "wheel-app")).equals(single)).toBe(true);
    // The .deb inside: dpkg-deb unpacks it, md5sum -c passes, its library is the single-file prune's.
    execFileSync("dpkg-deb", ["-x", join(x, "debs/t.deb"), join(x, "deb")]);
    execFileSync("dpkg-deb", ["-e", join(x, "debs/t.deb"), join(x, "deb/DEBIAN")]);
    execFileSync("md5sum", ["--quiet", "-c", "DEBIAN/md5sums"], { cwd: join(x, "deb") });
    expect(readFileSync(join(x, "deb/usr/lib/app")).equals(single)).toBe(true);
    // Every level's entries counted in the one answer, as the CLI's --json counts them.
    const json = JSON.parse((await kit("prune", `--keep=${KEEP}`, "--dry-run", "--json", tarball)).stdout) as { files: { input: string; entries: { kept: boolean }[] }[] };
    // Every file edited is below the wheel or the .deb (named as the CLI names them), and both are reached.
    const levels = json.files.map((f) => /^.*bundle\.tar\.gz!(debs\/t\.deb|wheels\/app-1\.0-py3-none-any\.whl)!/.exec(f.input)?.[1]);
    expect(new Set(levels)).toEqual(new Set(["debs/t.deb", "wheels/app-1.0-py3-none-any.whl"]));
    const cliEntries = json.files.flatMap((f) => f.entries);
    expect(page.reply.entries).toBe(cliEntries.length);
    expect(page.reply.kept).toBe(cliEntries.filter((e) => e.kept).length);

    // Three levels: that tarball in a zip. The zip's members decode to the CLI's, the tarball to the CLI's tar.
    const zip = join(dir, "outer.zip");
    execFileSync("python3", ["-c", "import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED)\nz.write(sys.argv[2],'bundle.tar.gz')\nz.writestr('notes.txt','x')\nz.close()", zip, tarball]);
    const pageZip = await pagePrune(zip);
    expect(pageZip.reply.changed).toBe(true);
    expect(pageZip.reply.entries).toBe(page.reply.entries);
    expect(pageZip.reply.kept).toBe(page.reply.kept);
    const cliZip = await cliPrune(zip, "cli-outer.zip");
    const members = (bytes: Buffer) => {
      const path = join(dir, "members.zip");
      writeFileSync(path, bytes);
      return JSON.parse(execFileSync("python3", ["-c", "import json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps([[i.filename,z.read(i).hex()] for i in z.infolist()]))", path], { encoding: "utf8", maxBuffer: 1 << 28 })) as [string, string][];
    };
    const [pm, cm] = [members(pageZip.bytes), members(cliZip)];
    expect(pm.map((m) => m[0])).toEqual(cm.map((m) => m[0]));
    pm.forEach((m, i) => expect(decoded(Buffer.from(m[1], "hex")).equals(decoded(Buffer.from(cm[i]![1], "hex"))), m[0]).toBe(true));

    // An RPM inside holding device code is refused, naming it (the CLI refuses it too); one without is left as it is.
    const withRpm = join(dir, "with-rpm.tar");
    writeFileSync(withRpm, tarOf([tarEntry("x.rpm", rpmOf(gzipSync(cpioOf([["./usr/lib/app", readFileSync(join(tarRoot, "usr/lib/app"))]])), "gzip")), tarEntry("app", readFileSync(join(tarRoot, "usr/lib/app")))]));
    const refused = await pagePrune(withRpm).then(() => undefined, (e: unknown) => e as OffloadKitError);
    expect(refused?.code).toBe("RPM_NOT_WRITABLE");
    expect(refused?.message).toContain("with-rpm.tar!x.rpm");
    expect((await kit("prune", `--keep=${KEEP}`, "-o", "never.tar", withRpm)).code).not.toBe(0);
    const quietRpm = join(dir, "quiet-rpm.tar");
    writeFileSync(quietRpm, tarOf([tarEntry("x.rpm", rpmOf(gzipSync(cpioOf([["./usr/share/doc", Buffer.from("text\n")]])), "gzip")), tarEntry("app", readFileSync(join(tarRoot, "usr/lib/app")))]));
    const quiet = await pagePrune(quietRpm);
    expect(quiet.reply.changed).toBe(true);
    expect(decoded(quiet.bytes).equals(decoded(await cliPrune(quietRpm, "cli-quiet-rpm.tar")))).toBe(true);
  }, HANG_MS);

  it("refusals: a selection keeping no device code (as the CLI), an RPM (as the CLI), an image and a file that is no package (the CLI writes them)", async () => {
    const deb = join(dir, "t-gzip.deb");
    if (!statSync(deb, { throwIfNoEntry: false })) execFileSync("dpkg-deb", ["--root-owner-group", "-Zgzip", "--build", debRoot, deb], { stdio: "pipe" });
    const cli = await kit("prune", "--keep=gfx1100", "-o", "never.deb", deb);
    expect(cli.code).not.toBe(0);
    const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as OffloadKitError);
    const nothing = await refusal(pagePrune(deb, "gfx1100"));
    // As the CLI: the member that would keep no device code named, --allow-empty said (the page has no such switch).
    expect(nothing?.code).toBe("PRUNE_EMPTY");
    expect(cli.stderr).toContain(nothing!.message.slice(nothing!.message.indexOf("!")));

    const rpm = join(dir, "x.rpm");
    writeFileSync(rpm, rpmOf(tarOf([tarEntry("usr/lib/app", readFileSync(join(tarRoot, "usr/lib/app")))]), "gzip"));
    expect((await refusal(pagePrune(rpm)))?.code).toBe("RPM_NOT_WRITABLE");

    const image = join(dir, "image.tar");
    writeFileSync(image, dockerImage([tarOf([tarEntry("usr/lib/app", readFileSync(join(tarRoot, "usr/lib/app")))])]));
    const imageError = await refusal(pagePrune(image));
    expect(imageError?.code).toBe("PACKAGE_NOT_WRITTEN_HERE");
    expect(imageError?.message).toContain("offload-kit prune writes it");

    const text = join(dir, "notes.txt");
    writeFileSync(text, "just text, no package\n".repeat(100));
    expect((await refusal(pagePrune(text)))?.code).toBe("PACKAGE_NOT_WRITTEN_HERE");
    // A package with no device code for the page to edit: unchanged, the input itself.
    const plain = join(dir, "plain.tar.gz");
    writeFileSync(plain, execFileSync("gzip", ["-c"], { input: tarOf([tarEntry("readme.txt", Buffer.from("hello\n"))]) }));
    const unchanged = await pagePrune(plain);
    expect(unchanged.reply.changed).toBe(false);
    expect(unchanged.bytes.equals(readFileSync(plain))).toBe(true);
  }, HANG_MS);
});
