import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { writeBinaryBundle, writeTextBundle } from "../../src/index.js";
import { runInDir, scratchDir } from "./harness.js";

const enc = (s: string) => new TextEncoder().encode(s);
const HOST = "host-x86_64-unknown-linux-gnu-";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a:xnack-";

function workdir(): string {
  return scratchDir("offload-kit-cli-");
}

const kit = (dir: string, ...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

describe("offload-kit ls", () => {
  it("lists a bundle at byte 0 and bundles embedded in another file, with absolute offsets", async () => {
    const dir = workdir();
    const a = writeBinaryBundle([{ id: HOST, data: enc("H") }, { id: G906, data: enc("D906") }], 8);
    const b = writeBinaryBundle([{ id: G90A, data: enc("D90A!") }]);
    writeFileSync(join(dir, "a.bc"), a);
    // An "executable" with two bundles in its data, like a .hip_fatbin section.
    const exe = new Uint8Array(4096 + a.length + 100 + b.length + 50);
    exe.set(a, 4096);
    exe.set(b, 4096 + a.length + 100);
    writeFileSync(join(dir, "app"), exe);
    const run = await kit(dir, "ls", "--json", "a.bc", "app");
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout.toString());
    expect(json.files[0].bundles[0]).toMatchObject({ format: "binary", offset: 0, align: 8 });
    expect(json.files[0].bundles[0].entries.map((e: { id: string }) => e.id)).toEqual([HOST, G906]);
    const embedded = json.files[1].bundles;
    expect(embedded.map((x: { offset: number }) => x.offset)).toEqual([4096, 4096 + a.length + 100]);
    const entry = embedded[1].entries[0];
    expect(Buffer.from(exe.subarray(entry.offset, entry.offset + entry.size)).toString()).toBe("D90A!");
  });

  it("prints a table, lists text bundles, and says when there is nothing", async () => {
    const dir = workdir();
    writeFileSync(join(dir, "t.ll"), writeTextBundle(";", [{ id: HOST, data: enc("x\n") }, { id: G906, data: enc("y") }]));
    writeFileSync(join(dir, "plain"), "nothing here");
    const summary = await kit(dir, "ls", "t.ll", "plain");
    expect(summary.stdout.toString()).toBe(
      `t.ll: 1 bundle, 2 entries: host, gfx906\nplain: no offload bundles found (12 bytes)\ntotal (2 files): 1 bundle, 2 entries: host, gfx906\n`,
    );
    const run = await kit(dir, "ls", "--verbose", "t.ll", "plain");
    expect(run.code).toBe(0);
    const text = run.stdout.toString();
    expect(text).toContain("t.ll: text bundle (';' markers) at 0x0");
    expect(text).toMatch(new RegExp(`0x44\\s+2\\s+1\\s+${HOST}`));
    expect(text).toContain("plain: no offload bundles found (12 bytes)");
  });

  it("reports an unreadable file and a damaged bundle without a stack trace", async () => {
    const dir = workdir();
    const good = writeBinaryBundle([{ id: HOST, data: enc("H") }, { id: G906, data: enc("D") }]);
    writeFileSync(join(dir, "cut.bc"), good.subarray(0, good.length - 1));
    const run = await kit(dir, "ls", "missing.bc", "cut.bc");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("offload-kit ls: error: 'missing.bc': No such file or directory\n");
    expect(run.stdout.toString()).toContain("cut.bc: at 0x0: malformed bundle header: the payload of bundle entry 1");
  });
});

describe("offload-kit unbundle", () => {
  function makeInputs(dir: string, count: number): string[] {
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const name = `f${i}.bc`;
      writeFileSync(join(dir, name), writeBinaryBundle([
        { id: HOST, data: enc(`host ${i}`) },
        { id: G906, data: enc(`gfx906 ${i}`) },
        ...(i % 3 === 0 ? [] : [{ id: G90A, data: enc(`gfx90a ${i}`) }]),
      ]));
      names.push(name);
    }
    return names;
  }

  it("writes <out-dir>/<file>-<target> for every input, and reports what it wrote", async () => {
    const dir = workdir();
    const names = makeInputs(dir, 4);
    const run = await kit(dir, "unbundle", "-targets=hip-amdgcn-amd-amdhsa-gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "--out-dir=out", "--allow-missing-bundles", "--json", ...names);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout.toString());
    expect(json.results).toHaveLength(4);
    expect(readFileSync(join(dir, "out", "f1.bc-hip-amdgcn-amd-amdhsa--gfx906"), "utf8")).toBe("gfx906 1");
    expect(readFileSync(join(dir, "out", "f1.bc-hipv4-amdgcn-amd-amdhsa--gfx90a_xnack-"), "utf8")).toBe("gfx90a 1");
    // f0 has no gfx90a entry: allowed, so an empty file, and the JSON says so.
    expect(readFileSync(join(dir, "out", "f0.bc-hipv4-amdgcn-amd-amdhsa--gfx90a_xnack-"), "utf8")).toBe("");
    expect(json.results[0].outputs[1]).toMatchObject({ content: "empty", entry: null, size: 0 });
    expect(json.results[1].outputs[1]).toMatchObject({ content: "entry", entry: G90A, size: 8 });
  });

  it("fails an input that lacks a bundle, goes on with the others, and exits 1", async () => {
    const dir = workdir();
    const names = makeInputs(dir, 3);
    const run = await kit(dir, "unbundle", `-targets=${G90A}`, "--out-dir=out", ...names);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`offload-kit unbundle: error: f0.bc: Can't find bundles for ${G90A}`);
    expect(run.stderr).toMatch(/unbundled 2 of 3 files into out: 2 outputs, 16 bytes/);
    expect(readdirSync(join(dir, "out")).sort()).toEqual([`f1.bc-${G90A.replace(":", "_")}`, `f2.bc-${G90A.replace(":", "_")}`]);
  });

  it("gives the same outputs with worker threads (built CLI) as in one thread", async () => {
    const dir = workdir();
    const names = makeInputs(dir, 40);
    const one = await kit(dir, "unbundle", `-targets=${G906}`, "--out-dir=one", "--jobs=1", ...names);
    const bin = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
    const two = spawnSync(process.execPath, [bin, "unbundle", `-targets=${G906}`, "--out-dir=two", "--jobs=2", "--json", ...names], { cwd: dir, encoding: "utf8" });
    expect([one.code, two.status, two.stderr]).toEqual([0, 0, ""]);
    expect(JSON.parse(two.stdout).results.map((r: { input: string }) => r.input)).toEqual(names);
    const files = readdirSync(join(dir, "one")).sort();
    expect(files).toHaveLength(40);
    expect(readdirSync(join(dir, "two")).sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(dir, "two", f))).toEqual(readFileSync(join(dir, "one", f)));
  });

  it("never writes outside the output folder, whatever the target contains", async () => {
    const dir = workdir();
    mkdirSync(join(dir, "in"));
    writeFileSync(join(dir, "in", "x.bc"), writeBinaryBundle([{ id: HOST, data: enc("h") }]));
    const run = await kit(dir, "unbundle", "-targets=host-x86_64-unknown-linux-gnu-/../../escape", "--out-dir=out", "--allow-missing-bundles", "in/x.bc");
    expect(run.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["in", "out"]);
    expect(readdirSync(join(dir, "out"))).toEqual(["x.bc-host-x86_64-unknown-linux-gnu-_.._.._escape-"]);
  });

  it("refuses two inputs with the same file name, and bad targets, before writing anything", async () => {
    const dir = workdir();
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    for (const d of ["a", "b"]) writeFileSync(join(dir, d, "x.bc"), writeBinaryBundle([{ id: HOST, data: enc("h") }]));
    const same = await kit(dir, "unbundle", `-targets=${HOST}`, "--out-dir=out", "a/x.bc", "b/x.bc");
    expect(same.code).toBe(1);
    expect(same.stderr).toContain("inputs 'a/x.bc' and 'b/x.bc' have the same file name");
    const bad = await kit(dir, "unbundle", "-targets=hip-foo-amd-amdhsa--gfx906", "--out-dir=out", "a/x.bc");
    expect(bad.stderr).toBe("offload-kit unbundle: error: invalid target 'hip-foo-amd-amdhsa--gfx906', unknown target triple 'foo-amd-amdhsa-'\n");
    // The output folder this run made, empty, is gone again.
    expect(existsSync(join(dir, "out"))).toBe(false);
  });

  it("says where the bundles of a file that is not a bundle are, and what writes them", async () => {
    const dir = workdir();
    const app = new URL("../fixtures/hosts/app", import.meta.url).pathname;
    const run = await kit(dir, "unbundle", `-targets=${G906}`, "--out-dir=out", app);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${app}: Can't find bundles for ${G906}: the file holds 3 bundles in .hip_fatbin; ` +
      `'offload-kit extract --targets=${G906} --out-dir=<dir> ${app}' writes them\n`);
  });

  it("lists the bundles of an executable's .hip_fatbin, a compressed one among them", async () => {
    const run = await kit(workdir(), "ls", "-v", new URL("../fixtures/hosts/app", import.meta.url).pathname);
    expect(run.code).toBe(0);
    const text = run.stdout.toString();
    expect(text).toContain("app: binary bundle at 0x1000, 12256 bytes, align 4096, 3 entries, in section .hip_fatbin\n");
    expect(text).toContain("app: zstd compressed bundle v2 at 0x7000, 1390 bytes, hash 0xf116ef633edd9271: binary bundle at 0x0, 12256 bytes, align 4096, 3 entries, in section .hip_fatbin\n");
  });
});

describe("offload-kit front door", () => {
  it("prints usage, version and a clear error for an unknown command", async () => {
    const dir = workdir();
    const help = await kit(dir, "--help");
    expect(help.code).toBe(0);
    expect(help.stdout.toString()).toMatch(/^offload-kit: .*\n\nUSAGE: offload-kit <command>/);
    expect((await kit(dir, "version")).stdout.toString()).toMatch(/^offload-kit \d+\.\d+\.\d+/);
    const bad = await kit(dir, "frob");
    expect([bad.code, bad.stderr]).toEqual([2, "offload-kit: error: unknown command 'frob' (see 'offload-kit --help')\n"]);
  });
});
