// The selection rule of `prune`: which entries --keep / --drop keep, per check --gpu's rules with a bare
// processor standing for every xnack/sramecc setting.
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { decideEntry, expandGpu, parseSelection } from "../../src/prune/select.js";

const keep = (gpus: string[], id: string) => decideEntry(parseSelection("keep", gpus), id);
const drop = (gpus: string[], id: string) => decideEntry(parseSelection("drop", gpus), id);

describe("expandGpu", () => {
  it("takes every unsaid feature of the processor both ways", () => {
    expect(expandGpu("gfx90a").devices.map((d) => d.canonical).sort()).toEqual(["gfx90a:sramecc+:xnack+", "gfx90a:sramecc+:xnack-", "gfx90a:sramecc-:xnack+", "gfx90a:sramecc-:xnack-"].sort());
    expect(expandGpu("gfx90a:xnack-").devices).toHaveLength(2);
    expect(expandGpu("gfx90a:sramecc+:xnack-").devices).toHaveLength(1);
    expect(expandGpu("gfx1100").devices).toHaveLength(1);
    expect(expandGpu("gfx906").devices).toHaveLength(4);
    expect(expandGpu("sm_80").devices).toHaveLength(1);
  });

  it("refuses what check --gpu refuses", () => {
    expect(() => parseSelection("keep", ["gfx9999"])).toThrow(OffloadKitError);
    expect(() => parseSelection("keep", ["gfx90a:xnack"])).toThrow(/invalid GPU/);
    expect(() => parseSelection("keep", [" ", ""])).toThrow(/at least one GPU/);
  });
});

describe("--keep", () => {
  it("a bare processor keeps either xnack setting and the any build", () => {
    for (const id of ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", "hip-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"]) {
      expect(keep(["gfx90a"], id)).toEqual({ keep: true, host: false, matched: ["gfx90a"] });
    }
  });

  it("a stated setting keeps only what a device with it loads", () => {
    expect(keep(["gfx90a:xnack-"], "hip-amdgcn-amd-amdhsa--gfx90a:xnack+").keep).toBe(false);
    expect(keep(["gfx90a:xnack-"], "hip-amdgcn-amd-amdhsa--gfx90a:xnack-").keep).toBe(true);
    expect(keep(["gfx90a:xnack-"], "hip-amdgcn-amd-amdhsa--gfx90a").keep).toBe(true);
  });

  it("generic code objects stay for a processor of their family", () => {
    expect(keep(["gfx1100"], "hip-amdgcn-amd-amdhsa--gfx11-generic").keep).toBe(true);
    expect(keep(["gfx1030"], "hip-amdgcn-amd-amdhsa--gfx11-generic").keep).toBe(false);
    expect(keep(["gfx906"], "hip-amdgcn-amd-amdhsa--gfx9-generic:xnack-").keep).toBe(true);
  });

  it("other processors, other vendors and other kinds of code go; host entries stay", () => {
    expect(keep(["gfx90a"], "hip-amdgcn-amd-amdhsa--gfx906").keep).toBe(false);
    expect(keep(["gfx90a"], "hip-amdgcn-amd-amdhsa--gfx942").keep).toBe(false);
    expect(keep(["gfx90a"], "openmp-nvptx64-nvidia-cuda--sm_80").keep).toBe(false);
    expect(keep(["sm_80"], "openmp-nvptx64-nvidia-cuda--sm_80").keep).toBe(true);
    expect(keep(["gfx90a"], "host-x86_64-unknown-linux-gnu-")).toEqual({ keep: true, host: true, matched: [] });
    expect(keep(["gfx90a"], "host-x86_64-unknown-linux-gnu")).toEqual({ keep: true, host: true, matched: [] });
  });

  it("several GPUs: kept when any of them loads it, and says which", () => {
    expect(keep(["gfx906", "gfx1100"], "hip-amdgcn-amd-amdhsa--gfx1100")).toEqual({ keep: true, host: false, matched: ["gfx1100"] });
    expect(keep(["gfx906", "gfx1100"], "hip-amdgcn-amd-amdhsa--gfx90a").keep).toBe(false);
  });
});

describe("--drop", () => {
  it("is the inverse of --keep for device entries", () => {
    const ids = ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx11-generic", "openmp-nvptx64-nvidia-cuda--sm_70"];
    for (const gpus of [["gfx90a"], ["gfx1100"], ["gfx906:xnack-", "sm_70"]]) {
      for (const id of ids) expect(drop(gpus, id).keep).toBe(!keep(gpus, id).keep);
    }
  });

  it("never drops host entries", () => {
    expect(drop(["gfx90a"], "host-x86_64-unknown-linux-gnu-").keep).toBe(true);
  });
});
