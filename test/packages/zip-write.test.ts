// Issue 26 item 2: prune, compress and decompress of a wheel write a wheel. Members without device code are copied
// as their stored bytes (local header, data and data descriptor verbatim), edited members are byte for byte what
// the single-file command writes, deflated again; RECORD's sha256 and sizes are rewritten; Python's zipfile -t
// passes, a RECORD check in Python passes, and pip installs it offline (pip is asked only for a local file).
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { bytesSource } from "../../src/engine/source.js";
import { readZip } from "../../src/packages/zip.js";
import { rewriteRecord } from "../../src/packages/node/edit-zip.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HOSTS } from "./build.js";
import { nativeTool } from "../native.js";

const dir = scratchDir("offload-kit-zip-write-");
const python = nativeTool("python3");

/**
 * `t-1.0-py3-none-any.whl`, written by Python's zipfile to a pipe (so every member has a data descriptor):
 * the two fat binaries deflated, a text file stored, METADATA, WHEEL and a RECORD listing them all.
 */
const BUILD = String.raw`
import base64, hashlib, sys, zipfile
files = {
  "t/lib/app": open(sys.argv[1], "rb").read(),
  "t/lib/libboth.a": open(sys.argv[2], "rb").read(),
  "t/__init__.py": b"",
  "t/data, with comma.txt": b"plain text\n" * 100,
  "t-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: t\nVersion: 1.0\n",
  "t-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(b): return base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
import csv, io
record = io.StringIO()
w = csv.writer(record, lineterminator="\n")
for name, data in files.items(): w.writerow([name, "sha256=" + digest(data), len(data)])
w.writerow(["t-1.0.dist-info/RECORD", "", ""])
files["t-1.0.dist-info/RECORD"] = record.getvalue().encode()
with zipfile.ZipFile(sys.stdout.buffer, "w") as z:
  for name, data in files.items():
    z.writestr(zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6)), data, zipfile.ZIP_STORED if name.endswith(".txt") else zipfile.ZIP_DEFLATED)
`;

/** Python's own checks: zipfile's CRC test, and every RECORD row's sha256 and size against the member. */
const CHECK = String.raw`
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
assert bad is None, "bad CRC in " + bad
record = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")][0]
rows = list(csv.reader(io.StringIO(z.read(record).decode())))
assert sorted(r[0] for r in rows) == sorted(z.namelist()), "RECORD does not list every member"
for name, hash, size in rows:
  if name == record: continue
  data = z.read(name)
  assert hash == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), "hash of " + name
  assert int(size) == len(data), "size of " + name
print("ok", len(rows))
`;

function py(script: string, ...args: string[]): string {
  return execFileSync(python!, ["-c", script, ...args], { cwd: dir, encoding: "utf8" });
}

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

/** Each member's stored span (local header to the next one) and its central record, by name. */
function spans(path: string): Map<string, { span: Buffer; method: number; flags: number }> {
  const bytes = readFileSync(path);
  const index = readZip(bytesSource(bytes));
  const sorted = [...index.members].sort((a, b) => a.localOffset - b.localOffset);
  const dirStart = Math.min(...index.members.map((m) => m.centralOffset));
  return new Map(sorted.map((m, i) => [m.name, { span: bytes.subarray(m.localOffset, i + 1 < sorted.length ? sorted[i + 1]!.localOffset : dirStart), method: m.method, flags: m.flags }]));
}

function member(path: string, name: string): Buffer {
  return Buffer.from(execFileSync(python!, ["-c", "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))", path, name], { cwd: dir }));
}

describe.skipIf(python === undefined)("a wheel in, a wheel out", () => {
  const wheel = "t-1.0-py3-none-any.whl";
  if (python !== undefined) {
    writeFileSync(join(dir, wheel), execFileSync(python, ["-c", BUILD, join(HOSTS, "app"), join(HOSTS, "libboth.a")]));
    chmodSync(join(dir, wheel), 0o640);
  }

  it("prune -o: members without code copied as stored bytes, edited ones as the single-file prune writes them, RECORD right; zipfile and pip accept it", async () => {
    const run = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "out.whl", wheel);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(/^t-1\.0-py3-none-any\.whl: zip package, 7 members, 2 with device code, 2 changed, t-1\.0\.dist-info\/RECORD rewritten, (\d+) -> (\d+) bytes, saves \d+ .* -> out\.whl$/m);
    expect(py(CHECK, "out.whl")).toBe("ok 7\n");
    const before = spans(join(dir, wheel));
    const after = spans(join(dir, "out.whl"));
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const name of ["t/__init__.py", "t/data, with comma.txt", "t-1.0.dist-info/METADATA", "t-1.0.dist-info/WHEEL"]) {
      expect(before.get(name)!.flags & 8, name).toBe(8);
      expect(after.get(name)!.span.equals(before.get(name)!.span), name).toBe(true);
    }
    for (const name of ["t/lib/app", "t/lib/libboth.a", "t-1.0.dist-info/RECORD"]) expect(after.get(name)!.method, name).toBe(8);
    // The edited members: the single-file prune of the same bytes.
    writeFileSync(join(dir, "app.in"), readFileSync(join(HOSTS, "app")));
    expect((await kit("prune", "--keep=gfx90a", "-o", "app.out", "app.in")).code).toBe(0);
    expect(member("out.whl", "t/lib/app").equals(readFileSync(join(dir, "app.out")))).toBe(true);
    expect((await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "libboth.out", join(HOSTS, "libboth.a"))).code).toBe(0);
    expect(member("out.whl", "t/lib/libboth.a").equals(readFileSync(join(dir, "libboth.out")))).toBe(true);
    expect(statSync(join(dir, "out.whl")).mode & 0o777).toBe(0o640);
    const unzip = nativeTool("unzip");
    if (unzip !== undefined) expect(spawnSync(unzip, ["-tq", "out.whl"], { cwd: dir, encoding: "utf8" }).status).toBe(0);
    // pip installs the local file alone (named as a wheel must be): no index, no dependencies.
    mkdirSync(join(dir, "pruned"));
    writeFileSync(join(dir, "pruned", wheel), readFileSync(join(dir, "out.whl")));
    const pip = spawnSync(python!, ["-m", "pip", "install", "--no-index", "--no-deps", "--no-compile", "--disable-pip-version-check", "--target", join(dir, "site"), join(dir, "pruned", wheel)], { encoding: "utf8" });
    if (pip.status === 0) {
      expect(readFileSync(join(dir, "site/t/lib/app")).equals(readFileSync(join(dir, "app.out")))).toBe(true);
    } else expect(pip.stderr).toMatch(/No module named pip/);
    // `wheel unpack` checks every member against RECORD's sha256 and size as it extracts (a mismatch is an
    // error naming the file). Debian's python3-wheel (.ci/run installs it) serves /usr/bin/python3.
    const wheelPython = [python!, "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import wheel"]).status === 0);
    if (wheelPython === undefined && process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1") throw new Error("python's wheel module is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)");
    if (wheelPython !== undefined) {
      const unpack = spawnSync(wheelPython, ["-m", "wheel", "unpack", "--dest", join(dir, "unpacked"), join(dir, "pruned", wheel)], { encoding: "utf8" });
      expect(unpack.status, unpack.stderr).toBe(0);
      expect(unpack.stdout + unpack.stderr).not.toMatch(/mismatch/i);
      expect(readFileSync(join(dir, "unpacked/t-1.0/t/lib/app")).equals(readFileSync(join(dir, "app.out")))).toBe(true);
    }
  });

  it("--dry-run writes nothing and says the size the real run writes; --json has the package", async () => {
    const names = readdirSync(dir).sort();
    const dry = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--dry-run", "--json", wheel)).stdout);
    expect(readdirSync(dir).sort()).toEqual(names);
    const real = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--json", "-o", "again.whl", wheel)).stdout);
    expect(dry.packages[0]).toMatchObject({ input: wheel, output: null, format: "zip", members: 7, withDeviceCode: 2, record: "t-1.0.dist-info/RECORD" });
    expect(dry.packages[0].outputSize).toBe(statSync(join(dir, "again.whl")).size);
    expect(real.packages[0].outputSize).toBe(dry.packages[0].outputSize);
    expect(dry.total).toEqual(real.total);
    expect(dry.files.map((f: { input: string }) => f.input)).toEqual([`${wheel}!t/lib/app`, `${wheel}!t/lib/libboth.a`]);
    expect(readFileSync(join(dir, "again.whl"))).toEqual(readFileSync(join(dir, "out.whl")));
  });

  it("compress --in-place then decompress: a wheel each time, its members' bytes back as they were", async () => {
    mkdirSync(join(dir, "c"));
    writeFileSync(join(dir, "c", wheel), readFileSync(join(dir, wheel)));
    const c = await kit("compress", "--in-place", join("c", wheel));
    expect([c.code, c.stderr]).toEqual([0, ""]);
    expect(py(CHECK, join("c", wheel))).toBe("ok 7\n");
    const d = await kit("decompress", "--in-place", join("c", wheel));
    expect([d.code, d.stderr]).toEqual([0, ""]);
    expect(py(CHECK, join("c", wheel))).toBe("ok 7\n");
    expect(member(join("c", wheel), "t/lib/libboth.a").equals(readFileSync(join(HOSTS, "libboth.a")))).toBe(true);
    expect(readdirSync(join(dir, "c"))).toEqual([wheel]);
  });
});

describe.skipIf(python === undefined)("zip64", () => {
  it("a zip of more than 65535 members keeps its zip64 end records; Python reads every member", async () => {
    py(String.raw`
import sys, zipfile
with zipfile.ZipFile("many.zip", "w") as z:
  z.write(sys.argv[1], "lib/app", zipfile.ZIP_DEFLATED)
  for i in range(65600): z.writestr(f"f/{i}", b"")
`, join(HOSTS, "app"));
    expect(readZip(bytesSource(readFileSync(join(dir, "many.zip")))).zip64).toBe(true);
    const run = await kit("prune", "--keep=gfx90a", "-o", "many.out.zip", "many.zip");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    const index = readZip(bytesSource(readFileSync(join(dir, "many.out.zip"))));
    expect([index.zip64, index.members.length]).toEqual([true, 65601]);
    expect(py("import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.testzip(), len(z.namelist()))", "many.out.zip")).toBe("None 65601\n");
  }, 120_000);
});

describe("RECORD rows", () => {
  it("rewrites the rows of changed members only, quoting as Python's csv does", () => {
    const record = 'a/x.so,sha256=old,10\n"a/b, c.so",sha256=old2,20\nREADME,sha256=keep,3\nt.dist-info/RECORD,,\n';
    const out = rewriteRecord(record, new Map([["a/x.so", { sha256: "new", size: 5 }], ["a/b, c.so", { sha256: "n2", size: 7 }]]));
    expect(out).toBe('a/x.so,sha256=new,5\n"a/b, c.so",sha256=n2,7\nREADME,sha256=keep,3\nt.dist-info/RECORD,,\n');
  });
});
