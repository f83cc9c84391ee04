// Issue 26: prune, compress and decompress of a conda package (.conda and the legacy .tar.bz2) write a package
// conda accepts, of a tarball a tarball, and of an RPM a refusal. The packages are built here from the HIP
// fixtures (test/packages/conda_package.py: as conda-build and conda-package-handling 2.x write them) and judged
// with the ecosystem's tools: python's zipfile and tarfile, `zstd -t`, `bzip2 -t`, every paths.json row's sha256
// and size_in_bytes recomputed from the file the package holds (conda's safety check), and conda-package-handling's
// own `cph x` (Debian's conda-package-handling; conda itself is not packaged for Debian, so not run). The edited
// files are the single-file prune's bytes; every other tar header and body, every other zip member, and every other
// byte of paths.json are kept.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { nativeTool } from "../native.js";
import { HOSTS, PAYLOADS, cpioOf, haveTools, rpmOf, stage } from "./build.js";

const dir = scratchDir("offload-kit-conda-write-");
const tools = haveTools("python3", "zstd", "bzip2", "tar", "xz", "gzip");
const BUILDER = new URL("./conda_package.py", import.meta.url).pathname;
const NAME = "hipapp-1.0-0";

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

interface Entry { type: string; mode: number; mtime: number; uid: number; gid: number; uname: string; gname: string; linkname: string; pax: Record<string, string>; sha256: string | null; size: number | null }
interface Checked { tars: { label: string; names: string[] }[]; entries: Record<string, Entry>; pathsJson: string; rowsChecked: number; bad: string[] }

/** conda_package.py --check: the package read with python's zipfile/tarfile, zstd -t / bzip2 -t, every row of paths.json recomputed. */
function check(path: string): Checked {
  return JSON.parse(execFileSync("python3", [BUILDER, "--check", path], { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28 })) as Checked;
}

/** paths.json as conda-build would write it for the files now in the package: the same dump, new values. */
function pathsJsonFor(before: string, files: Record<string, Buffer>): string {
  const script = "import hashlib,json,sys\nd=json.loads(sys.argv[1])\nfiles=json.loads(sys.argv[2])\nfor r in d['paths']:\n  p=files.get(r['_path'])\n  if p is not None:\n    b=open(p,'rb').read(); r['sha256']=hashlib.sha256(b).hexdigest(); r['size_in_bytes']=len(b)\nsys.stdout.write(json.dumps(d,indent=2,sort_keys=True))";
  const paths = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, join(dir, v.toString())]));
  return execFileSync("python3", ["-c", script, before, JSON.stringify(paths)], { encoding: "utf8" });
}

/** The single-file prune of each payload fixture: path in the package -> file name in dir. */
async function singlePrunes(tag: string, args: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [path, fixture] of Object.entries(PAYLOADS)) {
    const single = `single-${tag}-${fixture}`;
    const r = await kit(...args, "-o", single, join(HOSTS, fixture));
    expect(r.code, r.stderr).toBe(0);
    out[path] = single;
  }
  return out;
}

const sha256 = (bytes: Buffer) => execFileSync("sha256sum", { input: bytes, encoding: "utf8" }).slice(0, 64);

/** The built package, its check, and the prefix it was made from. */
function buildPackages(): { root: string; before: Record<string, Checked> } {
  const root = stage(join(dir, "conda"));
  execFileSync("python3", [BUILDER, root, NAME, dir]);
  return { root, before: { ".conda": check(`${NAME}.conda`), ".tar.bz2": check(`${NAME}.tar.bz2`) } };
}

describe.skipIf(!tools)("conda packages in, conda packages out", () => {
  const built = tools ? buildPackages() : undefined;
  const cph = tools ? nativeTool("cph") : undefined;

  describe.each([".conda", ".tar.bz2"])("%s", (ext) => {
    const pkg = `${NAME}${ext}`;

    it("prune --out-dir: every paths.json row matches its file, the edited files are the single-file prune's, everything else kept", async () => {
      const before = built!.before[ext]!;
      expect(before.bad).toEqual([]);
      mkdirSync(join(dir, `out${ext}`));
      const run = await kit("prune", "--keep=gfx90a", "--allow-empty", `--out-dir=out${ext}`, pkg);
      expect([run.code, run.stderr]).toEqual([0, ""]);
      const record = ext === ".conda" ? `info-${NAME}\\.tar\\.zst!info/paths\\.json` : "info/paths\\.json";
      expect(run.stdout).toMatch(new RegExp(`^${pkg.replaceAll(".", "\\.")}: conda package, \\d+ members, 3 with device code, \\d changed, ${record} rewritten, \\d+ -> \\d+ bytes, saves \\d+ .* -> out${ext}/${pkg.replaceAll(".", "\\.")}$`, "m"));
      const out = join(`out${ext}`, pkg);
      const after = check(out);
      expect(after.bad).toEqual([]);
      expect(after.rowsChecked).toBe(before.rowsChecked);
      expect(after.tars).toEqual(before.tars);

      const singles = await singlePrunes(ext, ["prune", "--keep=gfx90a", "--allow-empty"]);
      const edited: Record<string, Buffer> = {};
      for (const [path, single] of Object.entries(singles)) {
        const a = before.entries[path]!;
        const b = after.entries[path]!;
        expect(b.sha256, path).toBe(sha256(readFileSync(join(dir, single))));
        if (a.sha256 !== b.sha256) edited[path] = Buffer.from(single);
      }
      expect(Object.keys(edited).length).toBeGreaterThan(0);
      // Every tar entry's header fields (type, mode, times, owners, link, pax records) kept; bodies kept but the edited files'.
      for (const [name, a] of Object.entries(before.entries)) {
        const b = after.entries[name]!;
        const keep = (e: Entry) => ({ ...e, sha256: undefined, size: undefined });
        expect(keep(b), name).toEqual(keep(a));
        if (edited[name] === undefined && name !== "info/paths.json") expect(b.sha256, name).toBe(a.sha256);
      }
      // paths.json: byte for byte what conda-build's dump gives with the new values.
      expect(after.pathsJson).toBe(pathsJsonFor(before.pathsJson, edited));
      expect(after.pathsJson).not.toBe(before.pathsJson);

      if (ext === ".conda") {
        // The zip: the same members in order, metadata.json's bytes and every zip field but the two tars' sizes and CRCs.
        const zipInfo = (p: string) => JSON.parse(execFileSync("python3", ["-c", "import zipfile,sys,json,hashlib\nz=zipfile.ZipFile(sys.argv[1])\nprint(json.dumps([[i.filename,i.date_time,i.compress_type,i.external_attr,i.create_system,hashlib.sha256(z.read(i)).hexdigest() if i.filename=='metadata.json' else None] for i in z.infolist()]))", p], { cwd: dir, encoding: "utf8" }));
        expect(zipInfo(out)).toEqual(zipInfo(pkg));
      }
      if (cph !== undefined) {
        // conda-package-handling extracts it (it finds the tars by the file's own name).
        const into = join(dir, `cph${ext}`);
        execFileSync(cph, ["x", out, "--dest", into], { cwd: dir, stdio: "pipe" });
        for (const [path, single] of Object.entries(singles)) expect(readFileSync(join(into, path)).equals(readFileSync(join(dir, single))), path).toBe(true);
        expect(readFileSync(join(into, "info/paths.json"), "utf8")).toBe(after.pathsJson);
        expect(readFileSync(join(into, "usr/lib/readme.txt"), "utf8")).toBe("no device code here\n");
      }
    }, HANG_MS);

    it("--dry-run --json writes nothing and says the size the real run writes; --in-place writes what --out-dir wrote", async () => {
      const names = readdirSync(dir).sort();
      const dry = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--dry-run", "--json", pkg)).stdout);
      expect(readdirSync(dir).sort()).toEqual(names);
      expect(dry.packages[0]).toMatchObject({ input: pkg, output: null, format: "conda", withDeviceCode: 3, outputSize: statSync(join(dir, `out${ext}`, pkg)).size });
      mkdirSync(join(dir, `in${ext}`));
      const inPlace = join(`in${ext}`, pkg);
      copyFileSync(join(dir, pkg), join(dir, inPlace));
      const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--in-place", inPlace);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(readFileSync(join(dir, inPlace)).equals(readFileSync(join(dir, `out${ext}`, pkg)))).toBe(true);
      expect(readdirSync(join(dir, `in${ext}`))).toEqual([pkg]);
    }, HANG_MS);

    it("a member left without device code is an error naming it, and nothing is written", async () => {
      mkdirSync(join(dir, `none${ext}`));
      const none = await kit("prune", "--keep=gfx1100", `--out-dir=none${ext}`, pkg);
      expect(none.code).not.toBe(0);
      expect(none.stderr).toMatch(new RegExp(`${pkg.replaceAll(".", "\\.")}!\\S+ .*keeps none of the bundle's device entries`));
      expect(readdirSync(join(dir, `none${ext}`))).toEqual([]);
    }, HANG_MS);

    it("compress then decompress: each a package whose rows all match, the files the single-file commands' bytes", async () => {
      mkdirSync(join(dir, `c${ext}`));
      mkdirSync(join(dir, `d${ext}`));
      const c = await kit("compress", `--out-dir=c${ext}`, pkg);
      expect([c.code, c.stderr]).toEqual([0, ""]);
      const compressed = check(join(`c${ext}`, pkg));
      expect(compressed.bad).toEqual([]);
      const d = await kit("decompress", `--out-dir=d${ext}`, join(`c${ext}`, pkg));
      expect([d.code, d.stderr]).toEqual([0, ""]);
      expect(check(join(`d${ext}`, pkg)).bad).toEqual([]);
      expect((await kit("compress", "-o", `c-app${ext}`, join(HOSTS, "app"))).code).toBe(0);
      expect(compressed.entries["usr/lib/app"]!.sha256).toBe(sha256(readFileSync(join(dir, `c-app${ext}`))));
    }, HANG_MS);
  });

  it("a paths.json that is not JSON, or of another paths_version, is an error naming it at its offset; nothing written", async () => {
    // The package again, its info tar holding a broken paths.json (python: zipfile, tarfile, the zstd program).
    const script = `import io,subprocess,sys,tarfile,zipfile
src,dst,text=sys.argv[1],sys.argv[2],sys.argv[3].encode()
with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst,"w",zipfile.ZIP_STORED) as out:
  for i in z.infolist():
    data=z.read(i)
    if i.filename.startswith("info-"):
      tar=subprocess.run(["zstd","-dcq"],input=data,stdout=subprocess.PIPE,check=True).stdout
      buf=io.BytesIO()
      with tarfile.open(fileobj=io.BytesIO(tar)) as t, tarfile.open(fileobj=buf,mode="w",format=tarfile.PAX_FORMAT) as w:
        for m in t.getmembers():
          body=t.extractfile(m).read() if m.isreg() else None
          if m.name=="info/paths.json": body=text; m.size=len(body)
          w.addfile(m,io.BytesIO(body) if body is not None else None)
      data=subprocess.run(["zstd","-19","-qc"],input=buf.getvalue(),stdout=subprocess.PIPE,check=True).stdout
    out.writestr(i,data)
`;
    for (const [text, code] of [['{"paths": [}', "info/paths.json: malformed: unexpected character at offset 11"], ['{"paths": [], "paths_version": 2}', "info/paths.json: paths_version 2, conda reads 1 only"]] as const) {
      mkdirSync(join(dir, "broken"), { recursive: true });
      execFileSync("python3", ["-c", script, join(dir, `${NAME}.conda`), join(dir, "broken", `${NAME}.conda`), text]);
      mkdirSync(join(dir, "broken-out"), { recursive: true });
      const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--out-dir=broken-out", join("broken", `${NAME}.conda`));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`broken/${NAME}.conda!info-${NAME}.tar.zst!${code}`);
      expect(readdirSync(join(dir, "broken-out"))).toEqual([]);
    }
  }, HANG_MS);

  it("a .conda written under another name is refused (conda finds its tars by the file name)", async () => {
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "renamed.conda", `${NAME}.conda`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`renamed.conda: a .conda must be named for the tars it holds (pkg-${NAME}.tar.zst)`);
    expect(existsSync(join(dir, "renamed.conda"))).toBe(false);
  }, HANG_MS);
});

describe.skipIf(!tools).each([
  ["none", [], ".tar"],
  ["gzip", ["-z"], ".tar.gz"],
  ["xz", ["-J"], ".tar.xz"],
  ["zstd", ["--zstd"], ".tar.zst"],
  ["bzip2", ["-j"], ".tar.bz2"],
])("a tarball (%s) in, a tarball out", (compression, flags, ext) => {
  it("prune -o: tar reads it, the edited files are the single-file prune's, the rest as it was", async () => {
    const root = existsSync(join(dir, "tarball", "root")) ? join(dir, "tarball", "root") : stage(join(dir, "tarball"));
    const tarball = `plain${ext}`;
    execFileSync("tar", ["-c", ...flags, "-f", join(dir, tarball), "-C", root, "."]);
    const run = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", `pruned${ext}`, tarball);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(new RegExp(`^${tarball.replaceAll(".", "\\.")}: tarball package, \\d+ members, 3 with device code, `, "m"));
    const listing = (p: string) => execFileSync("tar", ["-tvf", join(dir, p)], { encoding: "utf8" }).split("\n").map((l) => l.replace(/^(\S+ \S+)\s+\d+ /, "$1 "));
    expect(listing(`pruned${ext}`)).toEqual(listing(tarball));
    const into = join(dir, `x-${compression}`);
    mkdirSync(into);
    execFileSync("tar", ["-xf", join(dir, `pruned${ext}`), "-C", into]);
    const singles = await singlePrunes(`tar-${compression}`, ["prune", "--keep=gfx90a", "--allow-empty"]);
    for (const [path, single] of Object.entries(singles)) expect(readFileSync(join(into, path)).equals(readFileSync(join(dir, single))), path).toBe(true);
    expect(readFileSync(join(into, "usr/lib/readme.txt"), "utf8")).toBe("no device code here\n");
    // The same compressor's magic.
    expect(readFileSync(join(dir, `pruned${ext}`)).subarray(0, 3).equals(readFileSync(join(dir, tarball)).subarray(0, 3))).toBe(true);
  }, HANG_MS);
});

describe("an RPM", () => {
  it("prune is refused with its reason (signature and digests), exit status 1, nothing written; --json says it too", async () => {
    const rpm = rpmOf(cpioOf([["./usr/lib/app", readFileSync(join(HOSTS, "app"))]]), "identity");
    writeFileSync(join(dir, "t.rpm"), rpm);
    const r = await kit("prune", "--keep=gfx90a", "-o", "t-out.rpm", "t.rpm");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("t.rpm: an RPM is not written again: its signature header's digests and the packager's signature over them cover the payload");
    expect(existsSync(join(dir, "t-out.rpm"))).toBe(false);
    const j = await kit("prune", "--keep=gfx90a", "--json", "-o", "t-out.rpm", "t.rpm");
    expect(j.code).toBe(1);
    const report = JSON.parse(j.stdout);
    expect(report.files).toEqual([expect.objectContaining({ input: "t.rpm", output: null, error: expect.objectContaining({ code: "RPM_NOT_WRITABLE" }) })]);
    expect(report.packages[0]).toMatchObject({ input: "t.rpm", format: "rpm", output: null });
    expect(existsSync(join(dir, "t-out.rpm"))).toBe(false);
  }, HANG_MS);
});
