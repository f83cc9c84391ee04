// Issue 26: packages inside packages are edited at every level. A tarball holding a wheel, a conda .tar.bz2 and a
// plain library, and a zip holding the same wheel and conda package, are pruned: each inner package is rewritten by
// its own writer (the wheel's RECORD, the conda package's paths.json) and the outer one written again with its new
// bytes; judged with tar, python's zipfile (testzip, every RECORD hash recomputed) and conda_package.py's check
// (every paths.json row recomputed); the innermost files are the single-file prune's. An RPM inside that holds
// device code is refused naming its level; one that holds none is left as it is.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { HOSTS, cpioOf, haveTools, rpmOf, stage, tarEntry, tarOf } from "./build.js";

const dir = scratchDir("offload-kit-nested-write-");
const tools = haveTools("python3", "zstd", "bzip2", "tar", "gzip", "zip", "unzip");
const BUILDER = new URL("./conda_package.py", import.meta.url).pathname;

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

const WHEEL = `import base64,hashlib,sys,zipfile
def h(b): return "sha256="+base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
files={"x/app":open(sys.argv[2]+"/app","rb").read(),"x/libboth.a":open(sys.argv[2]+"/libboth.a","rb").read(),"x/__init__.py":b""}
with zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED) as z:
  for n,b in files.items(): z.writestr(n,b)
  z.writestr("x-1.0.dist-info/WHEEL","Wheel-Version: 1.0\\n")
  z.writestr("x-1.0.dist-info/RECORD","".join(f"{n},{h(b)},{len(b)}\\n" for n,b in files.items())+"x-1.0.dist-info/WHEEL,,\\nx-1.0.dist-info/RECORD,,\\n")
`;

// Every RECORD row with a hash matches its member (what pip and wheel unpack check); prints the members' sha256.
const RECORD_CHECK = `import base64,hashlib,json,sys,zipfile
z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None
rows=[l.split(",") for l in z.read("x-1.0.dist-info/RECORD").decode().splitlines()]
bad=[r[0] for r in rows if r[1] and ("sha256="+base64.urlsafe_b64encode(hashlib.sha256(z.read(r[0])).digest()).rstrip(b"=").decode()!=r[1] or int(r[2])!=len(z.read(r[0])))]
print(json.dumps({"bad":bad,"sha":{n:hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist()}}))
`;

const sha256 = (path: string) => execFileSync("sha256sum", [path], { encoding: "utf8" }).slice(0, 64);

describe.skipIf(!tools)("packages inside packages", () => {
  const singles: Record<string, string> = {};
  const build = () => {
    if (existsSync(join(dir, "inner"))) return;
    mkdirSync(join(dir, "inner"));
    execFileSync("python3", ["-c", WHEEL, join(dir, "inner/x-1.0-py3-none-any.whl"), HOSTS]);
    const root = stage(join(dir, "conda"));
    execFileSync("python3", [BUILDER, root, "hipapp-1.0-0", join(dir, "inner")]);
    copyFileSync(join(HOSTS, "app"), join(dir, "inner/plain-app"));
    execFileSync("tar", ["-czf", join(dir, "outer.tar.gz"), "-C", join(dir, "inner"), "x-1.0-py3-none-any.whl", "hipapp-1.0-0.tar.bz2", "plain-app"]);
    execFileSync("zip", ["-q", "-j", join(dir, "outer.zip"), join(dir, "inner/x-1.0-py3-none-any.whl"), join(dir, "inner/hipapp-1.0-0.tar.bz2")]);
  };

  async function single(fixture: string): Promise<string> {
    if (singles[fixture] === undefined) {
      const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", `single-${fixture}`, join(HOSTS, fixture));
      expect(r.code, r.stderr).toBe(0);
      singles[fixture] = sha256(join(dir, `single-${fixture}`));
    }
    return singles[fixture]!;
  }

  /** The wheel and conda package unpacked from an output, each checked by its ecosystem's rule. */
  async function expectInnerPackages(into: string): Promise<void> {
    const wheel = JSON.parse(execFileSync("python3", ["-c", RECORD_CHECK, join(into, "x-1.0-py3-none-any.whl")], { encoding: "utf8" }));
    expect(wheel.bad).toEqual([]);
    expect(wheel.sha["x/app"]).toBe(await single("app"));
    expect(wheel.sha["x/libboth.a"]).toBe(await single("libboth.a"));
    const conda = JSON.parse(execFileSync("python3", [BUILDER, "--check", join(into, "hipapp-1.0-0.tar.bz2")], { encoding: "utf8" }));
    expect(conda.bad).toEqual([]);
    expect(conda.entries["usr/lib/app"].sha256).toBe(await single("app"));
    expect(conda.pathsJson).not.toBe(readFileSync(join(dir, "conda/root/info/paths.json"), "utf8"));
  }

  it("a tarball holding a wheel, a conda package and a library: every level rewritten, each accepted by its tools", async () => {
    build();
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--json", "-o", "pruned.tar.gz", "outer.tar.gz");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const report = JSON.parse(r.stdout);
    const names = report.files.map((f: { input: string }) => f.input);
    expect(names).toEqual(expect.arrayContaining(["outer.tar.gz!plain-app", "outer.tar.gz!x-1.0-py3-none-any.whl!x/app", "outer.tar.gz!hipapp-1.0-0.tar.bz2!usr/lib/app"]));
    expect(report.files.find((f: { input: string }) => f.input === "outer.tar.gz!x-1.0-py3-none-any.whl!x/app").output).toBe("pruned.tar.gz!x-1.0-py3-none-any.whl!x/app");
    expect(report.packages[0]).toMatchObject({ format: "tarball", output: "pruned.tar.gz" });
    const into = join(dir, "x-tar");
    mkdirSync(into);
    execFileSync("tar", ["-xzf", join(dir, "pruned.tar.gz"), "-C", into]);
    expect(sha256(join(into, "plain-app"))).toBe(await single("app"));
    await expectInnerPackages(into);
  }, HANG_MS);

  it("a zip holding a wheel and a conda package: unzip -t passes, every level rewritten", async () => {
    build();
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "pruned.zip", "outer.zip");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^outer\.zip!x-1\.0-py3-none-any\.whl!x\/app: linked ELF .* -> pruned\.zip!x-1\.0-py3-none-any\.whl!x\/app$/m);
    expect(r.stdout).toMatch(/^outer\.zip: zip package, 2 members, 5 with device code, 5 changed, /m);
    execFileSync("unzip", ["-t", "-q", join(dir, "pruned.zip")]);
    const into = join(dir, "x-zip");
    mkdirSync(into);
    execFileSync("unzip", ["-q", join(dir, "pruned.zip"), "-d", into]);
    await expectInnerPackages(into);
  }, HANG_MS);

  it("an RPM inside: refused naming its level when it holds device code (nothing written), left as it is when not", async () => {
    mkdirSync(join(dir, "rpms"));
    writeFileSync(join(dir, "rpms/code.rpm"), rpmOf(gzipSync(cpioOf([["./usr/lib/app", readFileSync(join(HOSTS, "app"))]])), "gzip"));
    writeFileSync(join(dir, "rpms/text.rpm"), rpmOf(gzipSync(cpioOf([["./usr/share/doc", new TextEncoder().encode("nothing\n".repeat(10))]])), "gzip"));
    copyFileSync(join(HOSTS, "app"), join(dir, "rpms/app"));
    execFileSync("tar", ["-cf", join(dir, "with-code.tar"), "-C", join(dir, "rpms"), "code.rpm", "app"]);
    execFileSync("tar", ["-cf", join(dir, "without.tar"), "-C", join(dir, "rpms"), "text.rpm", "app"]);
    const refused = await kit("prune", "--keep=gfx90a", "-o", "out-with-code.tar", "with-code.tar");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("with-code.tar!code.rpm: an RPM is not written again");
    expect(existsSync(join(dir, "out-with-code.tar"))).toBe(false);
    const kept = await kit("prune", "--keep=gfx90a", "-o", "out-without.tar", "without.tar");
    expect([kept.code, kept.stderr]).toEqual([0, ""]);
    const into = join(dir, "x-rpm");
    mkdirSync(into);
    execFileSync("tar", ["-xf", join(dir, "out-without.tar"), "-C", into]);
    expect(readFileSync(join(into, "text.rpm")).equals(readFileSync(join(dir, "rpms/text.rpm")))).toBe(true);
    expect(sha256(join(into, "app"))).toBe(await single("app"));
  }, HANG_MS);

  it("a container image is written by the image writer, alone, gzipped or inside a tarball", async () => {
    // A docker save with a config whose diff_ids name its layer (the image writer checks them before editing).
    const layer = tarOf([tarEntry("usr/lib/app", readFileSync(join(HOSTS, "app")))]);
    const layerHex = createHash("sha256").update(layer).digest("hex");
    const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [`sha256:${layerHex}`] }, history: [{ created_by: "test" }] }));
    const configName = `${createHash("sha256").update(config).digest("hex")}.json`;
    const image = tarOf([
      tarEntry(`${layerHex}/layer.tar`, layer),
      tarEntry(configName, config),
      tarEntry("manifest.json", Buffer.from(JSON.stringify([{ Config: configName, RepoTags: ["test:1"], Layers: [`${layerHex}/layer.tar`] }]))),
    ]);
    writeFileSync(join(dir, "image.tar"), image);
    writeFileSync(join(dir, "image.tar.gz"), gzipSync(image));
    mkdirSync(join(dir, "images"));
    writeFileSync(join(dir, "images/image.tar"), image);
    execFileSync("tar", ["-cf", join(dir, "holds-image.tar"), "-C", join(dir, "images"), "image.tar"]);
    // The sha256 of usr/lib/app in every layer of every image found in the tar (images nested in tars included).
    const APP_IN_LAYERS = `import hashlib,io,sys,tarfile
def walk(t, out):
    for m in t.getmembers():
        if not m.isfile(): continue
        data = t.extractfile(m).read()
        if m.name.endswith("usr/lib/app"): out.append(hashlib.sha256(data).hexdigest())
        elif data[257:262] == b"ustar": walk(tarfile.open(fileobj=io.BytesIO(data)), out)
out = []
walk(tarfile.open(sys.argv[1]), out)
print(" ".join(out))`;
    for (const input of ["image.tar", "image.tar.gz", "holds-image.tar"]) {
      const r = await kit("prune", "--keep=gfx90a", "-o", `out-${input}`, input);
      expect(r.code, r.stderr).toBe(0);
      const found = execFileSync("python3", ["-c", APP_IN_LAYERS, join(dir, `out-${input}`)], { encoding: "utf8" }).trim().split(" ");
      expect(found, input).toEqual([await single("app")]);
    }
    // The gzipped one is written gzipped (Python's tarfile above decoded it).
    expect(readFileSync(join(dir, "out-image.tar.gz")).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  }, HANG_MS);
});
