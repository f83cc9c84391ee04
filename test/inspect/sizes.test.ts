// Where the bytes go (src/inspect/sizes.ts), on both engines: per target, per processor, per bundle, with the
// shares of compressed bundles, over the clang-19 fixtures.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { locate } from "../../src/inspect/locate.js";
import { fileSizes, processorOf, totalSizes } from "../../src/inspect/sizes.js";
import { decompressMember } from "../../src/compress/node/decompress.js";
import { ENGINE_KINDS, makeEngine } from "../engines.js";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/hosts/${name}`, import.meta.url)));

describe.each(ENGINE_KINDS)("sizes (%s engine)", (kind) => {
  const engine = makeEngine(kind);
  const sized = (name: string) => fileSizes(name, locate(fixture(name), { engine, openCompressed: (blob, member) => decompressMember(blob, member) }));

  it("groups an executable's entries by target and processor, sharing a compressed bundle's size among its entries", () => {
    const app = sized("app");
    expect([app.entries, app.bytes, app.images]).toEqual([9, 21256, 0]);
    expect(app.targets.map((r) => [r.id, r.entries, r.bytes])).toEqual([
      ["hipv4-amdgcn-amd-amdhsa--gfx90a", 3, 12192], ["hipv4-amdgcn-amd-amdhsa--gfx906", 3, 9064], ["host-x86_64-unknown-linux--", 3, 0],
    ]);
    expect(app.processors.map((r) => r.id)).toEqual(["gfx90a", "gfx906", "host"]);
    const packed = app.bundles[2]!;
    expect(packed.compressed?.method).toBe("zstd");
    // Stored: two plain bundles' payloads in full plus the compressed bundle's size, shared out.
    const plain = app.bundles[0]!.bytes + app.bundles[1]!.bytes;
    expect(app.storedBytes).toBe(plain + packed.compressed!.size);
    expect(app.targets.reduce((n, r) => n + r.storedBytes!, 0)).toBeCloseTo(app.storedBytes!, -1);
    expect(app.bundles.map((b) => [b.index, b.format, b.entries, b.section])).toEqual([
      [0, "binary", 3, ".hip_fatbin"], [1, "binary", 3, ".hip_fatbin"], [2, "binary", 3, ".hip_fatbin"],
    ]);
  });

  it("counts offload images by kind, triple and arch, and adds files up", () => {
    const omp = sized("omp.o");
    expect(omp.targets).toEqual([{ id: "openmp-amdgcn-amd-amdhsa--gfx906", entries: 1, bytes: 6772 }]);
    expect(omp.storedBytes).toBeUndefined();
    const total = totalSizes([omp, sized("libboth.a"), sized("app")]);
    expect([total.files, total.entries, total.bytes]).toEqual([3, 1 + 4 + 9, 6772 + 14217 + 21256]);
    expect(total.processors[0]).toMatchObject({ id: "gfx906", entries: 1 + 2 + 3, bytes: 6772 + 3620 + 6772 + 9064 });
  });
});

describe("processorOf", () => {
  it("names the processor of any entry ID", () => {
    expect(["hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", "host-x86_64-unknown-linux-gnu-", "openmp-nvptx64-nvidia-cuda--sm_70", "openmp-x86_64-pc-linux-gnu-", "hip-amdgcn-amd-amdhsa-",
      "hip-amdgcn-amd-amdhsa-gfx906", "hipv4-amdgcn-amd-amdhsa--gfx1250", "hip-amdgcn-amd-amdhsa--gfx9-generic:xnack-"].map(processorOf))
      .toEqual(["gfx90a", "host", "sm_70", "x86_64", "amdgcn", "gfx906", "gfx1250", "gfx9-generic"]);
  });
});
