// offload-kit sizes: tables by target, processor and bundle, JSON, files without device code, errors.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "./harness.js";

const HOSTS = new URL("../fixtures/hosts/", import.meta.url).pathname;
const kit = (...args: string[]) => runInDir(HOSTS, (io) => runOffloadKit("offload-kit", args, io));

describe("offload-kit sizes", () => {
  it("prints one line per file and one total table by default (issue 27 item 4)", async () => {
    const run = await kit("sizes", "app", "omp.o");
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe([
      "app: 3 bundles, 9 entries, 21,256 bytes, 15,550 stored (file: 38,016 bytes)",
      "omp.o: 0 bundles, 1 offload image, 1 entry, 6,772 bytes (file: 11,040 bytes)",
      "total (2 files): 10 entries, 28,028 bytes, 22,322 stored",
      "  TARGET                            ENTRIES   BYTES     %  STORED",
      "  hipv4-amdgcn-amd-amdhsa--gfx90a         3  12,192  43.5   8,924",
      "  hipv4-amdgcn-amd-amdhsa--gfx906         3   9,064  32.3   6,626",
      "  openmp-amdgcn-amd-amdhsa--gfx906        1   6,772  24.2   6,772",
      "  host-x86_64-unknown-linux--             3       0   0.0       0",
      "",
    ].join("\n"));
    // One file: its line, then its table (the total, said once).
    expect((await kit("sizes", "omp.o")).stdout.toString()).toBe([
      "omp.o: 0 bundles, 1 offload image, 1 entry, 6,772 bytes (file: 11,040 bytes)",
      "  TARGET                            ENTRIES  BYTES      %",
      "  openmp-amdgcn-amd-amdhsa--gfx906        1  6,772  100.0",
      "",
    ].join("\n"));
  });

  it("-v prints a table per file, largest first, with what compressed bundles store, and a total", async () => {
    const run = await kit("sizes", "-v", "app", "omp.o");
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe([
      "app: 3 bundles, 9 entries, 21,256 bytes, 15,550 stored (file: 38,016 bytes)",
      "  TARGET                           ENTRIES   BYTES     %  STORED",
      "  hipv4-amdgcn-amd-amdhsa--gfx90a        3  12,192  57.4   8,924",
      "  hipv4-amdgcn-amd-amdhsa--gfx906        3   9,064  42.6   6,626",
      "  host-x86_64-unknown-linux--            3       0   0.0       0",
      "omp.o: 0 bundles, 1 offload image, 1 entry, 6,772 bytes (file: 11,040 bytes)",
      "  TARGET                            ENTRIES  BYTES      %",
      "  openmp-amdgcn-amd-amdhsa--gfx906        1  6,772  100.0",
      "total (2 files): 10 entries, 28,028 bytes, 22,322 stored",
      "  TARGET                            ENTRIES   BYTES     %  STORED",
      "  hipv4-amdgcn-amd-amdhsa--gfx90a         3  12,192  43.5   8,924",
      "  hipv4-amdgcn-amd-amdhsa--gfx906         3   9,064  32.3   6,626",
      "  openmp-amdgcn-amd-amdhsa--gfx906        1   6,772  24.2   6,772",
      "  host-x86_64-unknown-linux--             3       0   0.0       0",
      "",
    ].join("\n"));
  });

  it("groups by processor and by bundle", async () => {
    const processors = (await kit("sizes", "--by=processor", "libboth.a")).stdout.toString();
    expect(processors).toContain("  gfx906           2  10,392  73.1\n");
    const bundles = (await kit("sizes", "--by=bundle", "app")).stdout.toString();
    expect(bundles).toContain("      2  0x7000  binary, zstd        3  7,096  12,256   1,390  .hip_fatbin\n");
  });

  it("gives JSON with files and a total", async () => {
    const run = await kit("sizes", "--json", "app", "fat.o");
    const json = JSON.parse(run.stdout.toString());
    expect(json.files.map((f: { path: string }) => f.path)).toEqual(["app", "fat.o"]);
    expect(json.files[1].targets).toEqual([
      { id: "hip-amdgcn-amd-amdhsa--gfx90a", entries: 1, bytes: 3824 },
      { id: "hip-amdgcn-amd-amdhsa--gfx906", entries: 1, bytes: 3620 },
      { id: "host-x86_64-pc-linux-gnu-", entries: 1, bytes: 1 },
    ]);
    expect(json.total).toMatchObject({ files: 2, entries: 12, bytes: 21256 + 7445 });
    expect(json.total.processors.map((r: { id: string }) => r.id)).toEqual(["gfx90a", "gfx906", "host"]);
  });

  it("says when a file has no device code, and fails only on what it cannot read", async () => {
    const dir = scratchDir("offload-kit-sizes-");
    writeFileSync(join(dir, "plain"), "nothing");
    const run = await runInDir(dir, (io) => runOffloadKit("offload-kit", ["sizes", "plain", "missing"], io));
    expect(run.code).toBe(1);
    expect(run.stdout.toString()).toBe("plain: no offload bundles or offload binaries (7 bytes)\n");
    expect(run.stderr).toBe("offload-kit sizes: error: 'missing': No such file or directory\n");
    const bad = await runInDir(dir, (io) => runOffloadKit("offload-kit", ["sizes", "--by=arch", "plain"], io));
    expect(bad.stderr).toBe("offload-kit sizes: error: --by must be one of target, processor, bundle, not 'arch' (see 'offload-kit sizes --help')\n");
  });
});
