// Issue 27 item 3, "the GPU in front of you": `check` without --gpu (or --gpu=native) and prune's
// --keep=native / --drop=native use this machine's GPUs. The machine is faked: shell scripts named offload-arch,
// amdgpu-arch, rocminfo and nvidia-smi on a PATH that holds nothing else, and a KFD topology under
// OFFLOAD_KIT_SYSFS, so a real GPU or ROCm install on the test machine changes nothing. Whole processes,
// through dist/bin/offload-kit.js (built by `npm run build`).
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Encode } from "../../src/formats/bytes.js";
import {
  findNativeGpus, parseArchToolOutput, parseComputeCapOutput, parseRocminfoOutput, processorFromTargetVersion, readKfdTopology,
} from "../../src/node/native-gpus.js";
import { HANG_MS } from "../limits.js";
import { scratchDir } from "./harness.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = join(ROOT, "dist/bin/offload-kit.js");
const HOST = "host-x86_64-unknown-linux-gnu-";
const G = (id: string) => `hip-amdgcn-amd-amdhsa--${id}`;

/** Two GPU agents and a CPU agent, as rocminfo (ROCm 6) prints them; trimmed to the lines that matter. */
const ROCMINFO = `ROCk module is loaded
==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD EPYC 7763 64-Core Processor
  Device Type:             CPU
  ISA Info:
*******
Agent 2
*******
  Name:                    gfx90a
  Marketing Name:          AMD Instinct MI250X
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
      Machine Models:          HSA_MACHINE_MODEL_LARGE
*******
Agent 3
*******
  Name:                    gfx90a
  Marketing Name:          AMD Instinct MI250X
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
*** Done ***
`;

interface Machine {
  /** The only folder on PATH. */
  readonly bin: string;
  readonly sysfs: string;
  readonly dir: string;
}

function machine(): Machine {
  const dir = scratchDir("offload-kit-native-");
  const bin = join(dir, "bin");
  const sysfs = join(dir, "sys");
  mkdirSync(bin);
  mkdirSync(sysfs);
  return { bin, sysfs, dir };
}

/** A tool on the fake PATH printing `output` and exiting with `status`; builtins only, as PATH has nothing else. */
function fakeTool(m: Machine, name: string, output: string, status = 0): void {
  const path = join(m.bin, name);
  writeFileSync(path, `#!/bin/sh\nprintf '%s' '${output.replace(/'/g, "'\\''")}'\nexit ${status}\n`);
  chmodSync(path, 0o755);
}

/** A KFD node: `gfx_target_version` and `capability` among properties the kernel writes. */
function kfdNode(m: Machine, node: number, gfxTargetVersion: number, capability: number): void {
  const dir = join(m.sysfs, "class/kfd/kfd/topology/nodes", String(node));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "properties"),
    `cpu_cores_count ${gfxTargetVersion === 0 ? 64 : 0}\nsimd_count ${gfxTargetVersion === 0 ? 0 : 440}\ncapability ${capability}\n` +
    `gfx_target_version ${gfxTargetVersion}\nvendor_id ${gfxTargetVersion === 0 ? 0 : 4098}\n`);
  writeFileSync(join(dir, "name"), gfxTargetVersion === 0 ? "\n" : "gfx\n");
}

function bundleFile(m: Machine, name: string, ids: readonly string[]): string {
  const path = join(m.dir, name);
  writeFileSync(path, writeBinaryBundle([HOST, ...ids].map((id) => ({ id, data: latin1Encode(`code for ${id}`) }))));
  return path;
}

function run(m: Machine, args: readonly string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: m.dir, encoding: "utf8", timeout: HANG_MS, env: { PATH: m.bin, OFFLOAD_KIT_SYSFS: m.sysfs },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.replace(/^\S*offload-kit(?:\.js)? /gm, "offload-kit ") };
}

describe("reading what each source prints", () => {
  it("gfx_target_version: minor and stepping are hex digits of the name; 0 is a CPU", () => {
    expect(processorFromTargetVersion(90010)).toBe("gfx90a");
    expect(processorFromTargetVersion(90402)).toBe("gfx942");
    expect(processorFromTargetVersion(90012)).toBe("gfx90c");
    expect(processorFromTargetVersion(110000)).toBe("gfx1100");
    expect(processorFromTargetVersion(100300)).toBe("gfx1030");
    expect(processorFromTargetVersion(120001)).toBe("gfx1201");
    expect(processorFromTargetVersion(0)).toBeUndefined();
    expect(processorFromTargetVersion(91600)).toBeUndefined();
  });

  it("rocminfo: the ISA names with their features, else the agents' gfx names; CPU agents are not GPUs", () => {
    expect(parseRocminfoOutput(ROCMINFO)).toEqual(["gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"]);
    const old = ROCMINFO.split("\n").filter((l) => !l.includes("amdgcn-amd-amdhsa--")).join("\n");
    expect(parseRocminfoOutput(old)).toEqual(["gfx90a", "gfx90a"]);
    expect(parseRocminfoOutput("  Name:  AMD EPYC 7763 64-Core Processor\n")).toEqual([]);
  });

  it("offload-arch / amdgpu-arch lines and nvidia-smi compute capabilities", () => {
    expect(parseArchToolOutput("gfx90a\nwarning: something\n\nsm_80\ngfx942:sramecc+:xnack-\n")).toEqual(["gfx90a", "sm_80", "gfx942:sramecc+:xnack-"]);
    expect(parseComputeCapOutput("9.0\n8.6\n")).toEqual(["sm_90", "sm_86"]);
  });

  it("the KFD topology: GPU nodes in node order, sramecc from capability bit 26 where the processor has it, CPU nodes skipped", () => {
    const m = machine();
    kfdNode(m, 0, 0, 0);
    kfdNode(m, 1, 90010, 0x04000000 | 0x1000);
    kfdNode(m, 2, 90010, 0x00080000); // the old, reserved bit: not sramecc
    kfdNode(m, 10, 110000, 0x04000000); // gfx1100 has no sramecc feature
    expect(readKfdTopology(m.sysfs)).toEqual([
      { targetId: "gfx90a:sramecc+", node: "1" },
      { targetId: "gfx90a:sramecc-", node: "2" },
      { targetId: "gfx1100", node: "10" },
    ]);
  });

  it("the first source that names a GPU wins; a failing tool is passed over; identical GPUs are counted", () => {
    const m = machine();
    kfdNode(m, 1, 90010, 0);
    fakeTool(m, "offload-arch", "", 1);
    fakeTool(m, "rocminfo", ROCMINFO);
    const search = findNativeGpus({ PATH: m.bin, OFFLOAD_KIT_SYSFS: m.sysfs });
    expect(search.gpus).toEqual([{ targetId: "gfx90a:sramecc+:xnack-", source: "rocminfo", where: "rocminfo", count: 2 }]);
    expect(search.tried).toEqual(["offload-arch", "amdgpu-arch", "nvptx-arch", "rocminfo"]);
  });
});

describe("check without --gpu", () => {
  it("offload-arch's GPUs: each is checked and named with its source; exit 0 only when every one loads", () => {
    const m = machine();
    fakeTool(m, "offload-arch", "gfx90a\ngfx1100\ngfx1100\n");
    fakeTool(m, "rocminfo", ROCMINFO); // never asked: offload-arch answered first
    const only90a = bundleFile(m, "only90a.bundle", [G("gfx90a")]);
    const r = run(m, ["check", only90a]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("GPU 1 of 2: gfx90a (from offload-arch)\n");
    expect(r.stdout).toContain("GPU 2 of 2: gfx1100 (2 GPUs, from offload-arch)\n");
    expect(r.stdout).toMatch(/^OK: every input has device code gfx90a can load \[this machine's GPU, from offload-arch\]$/m);
    expect(r.stdout).toMatch(/^FAIL: 1 of 1 inputs have no device code gfx1100 can load \[this machine's GPU, from offload-arch\]$/m);
    const both = bundleFile(m, "both.bundle", [G("gfx90a"), G("gfx1100")]);
    expect(run(m, ["check", both]).code).toBe(0);
    // --gpu=native is the same as leaving --gpu out.
    expect(run(m, ["check", "--gpu=native", both]).stdout).toBe(run(m, ["check", both]).stdout);
  });

  it("rocminfo's full target IDs: xnack- on the machine rejects xnack+ code", () => {
    const m = machine();
    fakeTool(m, "rocminfo", ROCMINFO);
    const xnackOn = bundleFile(m, "on.bundle", [G("gfx90a:xnack+")]);
    const r = run(m, ["check", xnackOn]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("GPU 1 of 1: gfx90a:sramecc+:xnack- (2 GPUs, from rocminfo)\n");
    expect(r.stdout).toContain("[this machine's GPU, from rocminfo]");
    expect(run(m, ["check", bundleFile(m, "off.bundle", [G("gfx90a:xnack-")])]).code).toBe(0);
  });

  it("the KFD topology (two GPUs, a CPU node) under OFFLOAD_KIT_SYSFS, in --json with where each was found", () => {
    const m = machine();
    kfdNode(m, 0, 0, 0);
    kfdNode(m, 1, 90402, 0x04000000);
    kfdNode(m, 2, 110000, 0);
    const file = bundleFile(m, "mixed.bundle", [G("gfx942:sramecc+"), G("gfx1030")]);
    const r = run(m, ["check", "--json", file]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: { ok: boolean; gpu: { input: string; found: { source: string; where: string; count: number } } }[] };
    expect(report.ok).toBe(false);
    const nodes = join(m.sysfs, "class/kfd/kfd/topology/nodes");
    expect(report.checks.map((c) => [c.gpu.input, c.ok, c.gpu.found])).toEqual([
      ["gfx942:sramecc+", true, { source: "kfd", where: `${nodes}/1`, count: 1 }],
      ["gfx1100", false, { source: "kfd", where: `${nodes}/2`, count: 1 }],
    ]);
    expect(run(m, ["check", file]).stdout).toContain(`GPU 1 of 2: gfx942:sramecc+ (from ${nodes}/1)\n`);
  });

  it("no GPU anywhere: exit 2, telling the user to pass --gpu", () => {
    const m = machine();
    kfdNode(m, 0, 0, 0);
    fakeTool(m, "offload-arch", ""); // LLVM 22's offload-arch on a machine without GPUs: no output, status 0
    const file = bundleFile(m, "a.bundle", [G("gfx90a")]);
    const r = run(m, ["check", file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("offload-kit check: error: no GPU found on this machine (asked offload-arch, amdgpu-arch, nvptx-arch, rocminfo, nvidia-smi, ");
    expect(r.stderr).toContain("pass --gpu=<target id>, e.g. --gpu=gfx90a");
    // An explicit --gpu needs no GPU.
    expect(run(m, ["check", "--gpu=gfx90a", file]).code).toBe(0);
  });

  it("nvidia-smi's compute capability on an NVIDIA machine without LLVM's tools", () => {
    const m = machine();
    fakeTool(m, "nvidia-smi", "9.0\n");
    const r = run(m, ["check", bundleFile(m, "cuda.bundle", [G("gfx90a")])]);
    expect(r.stdout).toContain("GPU 1 of 1: sm_90 (from nvidia-smi)\n");
    expect(r.code).toBe(1);
  });
});

describe("prune --keep=native / --drop=native", () => {
  it("resolves to this machine's GPUs and says which (dry run)", () => {
    const m = machine();
    kfdNode(m, 0, 0, 0);
    kfdNode(m, 1, 90010, 0x04000000);
    const file = bundleFile(m, "p.bundle", [G("gfx90a:sramecc+"), G("gfx90a:sramecc-"), G("gfx1030")]);
    const r = run(m, ["prune", "--keep=native", "--dry-run", "-v", file]);
    expect(r.code).toBe(0);
    const nodes = join(m.sysfs, "class/kfd/kfd/topology/nodes");
    expect(r.stderr).toContain(`offload-kit prune: note: --keep=native: gfx90a:sramecc+ (from ${nodes}/1)\n`);
    expect(r.stdout).toMatch(/kept\s+hip-amdgcn-amd-amdhsa--gfx90a:sramecc\+ /);
    expect(r.stdout).toMatch(/would drop\s+hip-amdgcn-amd-amdhsa--gfx90a:sramecc- /);
    expect(r.stdout).toMatch(/would drop\s+hip-amdgcn-amd-amdhsa--gfx1030 /);
    const json = JSON.parse(run(m, ["prune", "--drop=native,gfx1030", "--dry-run", "--json", file]).stdout) as { selection: unknown };
    expect(json.selection).toEqual({ mode: "drop", gpus: ["gfx90a:sramecc+", "gfx1030"], native: [{ id: "gfx90a:sramecc+", source: "kfd", where: `${nodes}/1`, count: 1 }] });
  });

  it("no GPU: exit 2 naming the option", () => {
    const m = machine();
    const r = run(m, ["prune", "--keep=native", "--dry-run", bundleFile(m, "p.bundle", [G("gfx90a")])]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no GPU found on this machine");
    expect(r.stderr).toContain("pass --keep=<target id>");
  });
});
