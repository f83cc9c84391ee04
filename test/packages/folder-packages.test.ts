// Issue 26: packages inside folders. `prune DIR` where DIR holds a wheel and a .conda (with a second hard-linked
// name) rewrites each package with its own writer, mirrored (--out-dir) or in place, like any other file of the
// tree: the input folder is left byte for byte, the mirror's packages pass their ecosystem's checks (every RECORD
// hash, every paths.json row), the hard-linked names stay one file, unchanged files stay hard links to the input,
// and --in-place gives the mirror's bytes. --dry-run writes nothing and says the sizes the real run writes.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { HOSTS, haveTools, stage } from "./build.js";

const dir = scratchDir("offload-kit-folder-packages-");
const tools = haveTools("python3", "zstd", "bzip2");
const BUILDER = new URL("./conda_package.py", import.meta.url).pathname;

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

const WHEEL = `import base64,hashlib,sys,zipfile
def h(b): return "sha256="+base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
files={"x/app":open(sys.argv[2]+"/app","rb").read(),"x/__init__.py":b""}
with zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED) as z:
  for n,b in files.items(): z.writestr(n,b)
  z.writestr("x-1.0.dist-info/RECORD","".join(f"{n},{h(b)},{len(b)}\\n" for n,b in files.items())+"x-1.0.dist-info/RECORD,,\\n")
`;
const RECORD_CHECK = `import base64,hashlib,json,sys,zipfile
z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None
rows=[l.split(",") for l in z.read("x-1.0.dist-info/RECORD").decode().splitlines()]
print(json.dumps([r[0] for r in rows if r[1] and ("sha256="+base64.urlsafe_b64encode(hashlib.sha256(z.read(r[0])).digest()).rstrip(b"=").decode()!=r[1] or int(r[2])!=len(z.read(r[0])))]))
`;

/** Every file under `root` (relative path -> bytes, hex). */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = join(rel, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else out[path] = readFileSync(join(root, path)).toString("hex");
    }
  };
  walk("");
  return out;
}

describe.skipIf(!tools)("packages inside folders", () => {
  const venv = join(dir, "venv");
  if (tools) {
    mkdirSync(join(venv, "cache"), { recursive: true });
    execFileSync("python3", ["-c", WHEEL, join(venv, "cache/x-1.0-py3-none-any.whl"), HOSTS]);
    execFileSync("python3", [BUILDER, stage(join(dir, "conda")), "hipapp-1.0-0", join(venv, "cache")]);
    rmSync(join(venv, "cache/hipapp-1.0-0.tar.bz2"));
    linkSync(join(venv, "cache/hipapp-1.0-0.conda"), join(venv, "hipapp-1.0-0.conda"));
    copyFileSync(join(HOSTS, "app"), join(venv, "app"));
    writeFileSync(join(venv, "readme.txt"), "no device code\n");
  }

  it("--out-dir mirrors the folder with each package rewritten; the input is left as it was", async () => {
    const before = snapshot(venv);
    mkdirSync(join(dir, "out"));
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--out-dir=out", "venv");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^venv\/cache\/x-1\.0-py3-none-any\.whl: zip package, .* -> out\/venv\/cache\/x-1\.0-py3-none-any\.whl$/m);
    expect(r.stdout).toMatch(/^venv\/(cache\/)?hipapp-1\.0-0\.conda: conda package, .*info\/paths\.json rewritten, .* -> out\/venv\/(cache\/)?hipapp-1\.0-0\.conda$/m);
    expect(snapshot(venv)).toEqual(before);
    const mirror = join(dir, "out/venv");
    expect(JSON.parse(execFileSync("python3", ["-c", RECORD_CHECK, join(mirror, "cache/x-1.0-py3-none-any.whl")], { encoding: "utf8" }))).toEqual([]);
    const conda = JSON.parse(execFileSync("python3", [BUILDER, "--check", join(mirror, "cache/hipapp-1.0-0.conda")], { encoding: "utf8" }));
    expect(conda.bad).toEqual([]);
    expect(statSync(join(mirror, "cache/hipapp-1.0-0.conda")).size).toBeLessThan(statSync(join(venv, "cache/hipapp-1.0-0.conda")).size);
    // The two names of the package are still one file; the unchanged file is still the input's inode.
    expect(statSync(join(mirror, "hipapp-1.0-0.conda")).ino).toBe(statSync(join(mirror, "cache/hipapp-1.0-0.conda")).ino);
    expect(statSync(join(mirror, "readme.txt")).ino).toBe(statSync(join(venv, "readme.txt")).ino);
    expect(readdirSync(join(mirror, "cache")).sort()).toEqual(["hipapp-1.0-0.conda", "x-1.0-py3-none-any.whl"]);
  }, HANG_MS);

  it("--in-place gives the mirror's bytes, hard links kept; --dry-run writes nothing and says the same sizes", async () => {
    cpSync(venv, join(dir, "copy"), { recursive: true });
    linkSync(join(dir, "copy/cache/hipapp-1.0-0.conda"), join(dir, "copy/hipapp-1.0-0.conda.2"));
    const names = snapshot(join(dir, "copy"));
    const dry = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--dry-run", "--json", "copy")).stdout);
    expect(snapshot(join(dir, "copy"))).toEqual(names);
    const sizes = Object.fromEntries(dry.packages.map((p: { input: string; outputSize: number }) => [p.input, p.outputSize]));
    expect(sizes["copy/cache/x-1.0-py3-none-any.whl"]).toBe(statSync(join(dir, "out/venv/cache/x-1.0-py3-none-any.whl")).size);
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--in-place", "copy");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const after = snapshot(join(dir, "copy"));
    const mirror = snapshot(join(dir, "out/venv"));
    for (const [path, bytes] of Object.entries(mirror)) expect(after[path] === bytes, path).toBe(true);
    expect(statSync(join(dir, "copy/hipapp-1.0-0.conda.2")).ino).toBe(statSync(join(dir, "copy/cache/hipapp-1.0-0.conda")).ino);
    expect(readdirSync(join(dir, "copy/cache")).sort()).toEqual(["hipapp-1.0-0.conda", "x-1.0-py3-none-any.whl"]);
  }, HANG_MS);
});
