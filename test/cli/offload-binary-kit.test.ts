// offload-kit on offload binaries: `ls` (table, --json, --objdump) and `extract`, in process, on the golden
// files of test/fixtures/offload-binary/ (so no native tool is needed).
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runPackager } from "../../src/cli/offload-packager.js";
import { writeOffloadBinaryMulti } from "../../src/formats/offload-binary.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { runInDir, scratchDir } from "./harness.js";

const fixtures = new URL("../fixtures/offload-binary/", import.meta.url).pathname;

function workdir(): string {
  const dir = scratchDir("offload-kit-ob-");
  for (const name of ["multi.19.bin", "multi.22.bin", "embedded.19.o", "multi.19.objdump.txt", "embedded.19.objdump.txt"]) {
    copyFileSync(join(fixtures, name), join(dir, name));
  }
  return dir;
}

const kit = (dir: string, ...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

describe("offload-kit ls, offload binaries", () => {
  it("lists every image of a raw file and of an object's section, with absolute offsets", async () => {
    const dir = workdir();
    expect((await kit(dir, "ls", "multi.19.bin", "embedded.19.o")).stdout.toString()).toBe(
      "multi.19.bin: 3 offload images: gfx906, sm_70, a1\nembedded.19.o: 3 offload images: gfx906, sm_70, a1\ntotal (2 files): 6 offload images: gfx906, sm_70, a1\n",
    );
    const run = await kit(dir, "ls", "-v", "multi.19.bin", "embedded.19.o");
    expect(run.code).toBe(0);
    const text = run.stdout.toString();
    expect(text).toContain("multi.19.bin: offload binaries at 0x0, 472 bytes, 3 binaries, 3 images\n");
    expect(text).toContain("embedded.19.o: offload binaries at 0x50, 472 bytes, 3 binaries, 3 images, in section .llvm.offloading\n");
    expect(text).toContain("      1  0x148      6  bc      cuda      nvptx64-nvidia-cuda  sm_70   feature=+ptx70,+sm_70\n");
    expect(text).not.toContain("no offload bundles found");
    const json = JSON.parse((await kit(dir, "ls", "--json", "embedded.19.o")).stdout.toString());
    const [image] = json.files[0].offloadBinaries[0].images;
    expect(image).toMatchObject({ index: 0, binaryOffset: 0x50, imageKindName: "elf", offloadKindName: "openmp", triple: "amdgcn-amd-amdhsa" });
    const bytes = readFileSync(join(dir, "embedded.19.o"));
    expect(bytes.subarray(image.offset, image.offset + image.size).toString()).toBe("IMG1");
  });

  it("--objdump prints llvm-objdump --offloading's text", async () => {
    const dir = workdir();
    const run = await kit(dir, "ls", "--objdump", "multi.19.bin", "embedded.19.o");
    expect(run.stdout.toString()).toBe(readFileSync(join(dir, "multi.19.objdump.txt"), "utf8") + readFileSync(join(dir, "embedded.19.objdump.txt"), "utf8"));
    writeFileSync(join(dir, "bad.bin"), readFileSync(join(dir, "multi.19.bin")).subarray(0, 400));
    const bad = await kit(dir, "ls", "--objdump", "bad.bin");
    expect(bad.code).toBe(1);
    // The third binary starts 64 bytes before the cut: fewer than LLVM 19 wants for a header and an entry.
    expect(bad.stderr).toBe("offload-kit ls: error: 'bad.bin': while extracting offloading files: Invalid data was encountered while parsing the file\n");
  });

  it("reports a magic that leads nowhere as a problem and keeps going", async () => {
    const dir = workdir();
    writeFileSync(join(dir, "junk"), Buffer.concat([Buffer.from("xx"), Buffer.from([0x10, 0xff, 0x10, 0xad, 9, 0, 0, 0]), Buffer.alloc(80)]));
    const run = await kit(dir, "ls", "junk");
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toContain("junk: at 0x2: offload binary: Invalid data was encountered while parsing the file");
  });
});

describe("offload-kit extract", () => {
  it("writes every image to generated names in --out-dir, from raw files and objects", async () => {
    const dir = workdir();
    const run = await kit(dir, "extract", "multi.19.bin", "embedded.19.o", "--out-dir=out");
    expect(run.code).toBe(0);
    expect(readdirSync(join(dir, "out")).sort()).toEqual([
      "embedded.19-amdgcn-amd-amdhsa-gfx906.0.o", "embedded.19-nvptx64-nvidia-cuda-sm_70.1.bc", "embedded.19-t1-a1.2.",
      "multi.19-amdgcn-amd-amdhsa-gfx906.0.o", "multi.19-nvptx64-nvidia-cuda-sm_70.1.bc", "multi.19-t1-a1.2.",
    ]);
    expect(readFileSync(join(dir, "out", "multi.19-nvptx64-nvidia-cuda-sm_70.1.bc"), "utf8")).toBe("IMG2xx");
  });

  it("filters like the packager, writes archives, and reports JSON", async () => {
    const dir = workdir();
    const run = await kit(dir, "extract", "--json", "multi.19.bin", "--image=file=sel.a,triple=t1", "--image=kind=cuda", "--archive");
    expect(run.code).toBe(1);
    const json = JSON.parse(run.stdout.toString());
    expect(json.errors).toEqual([{ file: "multi.19.bin", code: "PACKAGER_ARCHIVE_NEEDS_FILE", message: "Image must have a 'file' argument." }]);
    expect(json.outputs).toEqual([]);
    const ok = await kit(dir, "extract", "--json", "multi.19.bin", "--image=file=sel.a,triple=t1", "--archive");
    const archive = readFileSync(join(dir, "sel.a"));
    expect(JSON.parse(ok.stdout.toString()).outputs).toEqual([
      { path: "sel.a", id: "", offset: null, size: archive.length, sha256: createHash("sha256").update(archive).digest("hex"), bundle: null, file: "multi.19.bin", archiveOf: [2] },
    ]);
    expect(readFileSync(join(dir, "sel.a"), "latin1")).toBe("!<arch>\nmulti.19.bin/   0           0     0     644     4         `\nNONE");
  });

  it("reads compressed version 3 binaries that the packager (as 19) refuses", async () => {
    const dir = workdir();
    const packed = writeOffloadBinaryMulti(
      [{ imageKind: 1, offloadKind: 4, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx942"]], image: new TextEncoder().encode("V3IMG") }],
      { compress: { format: "zstd", compressor: (_f, data) => nodeCodecs.zstdCompress(data, 3) } },
    );
    writeFileSync(join(dir, "v3.bin"), packed);
    const run = await kit(dir, "extract", "v3.bin");
    expect(run.code).toBe(0);
    expect(readFileSync(join(dir, "v3-amdgcn-amd-amdhsa-gfx942.0.o"), "utf8")).toBe("V3IMG");
    const native = await runInDir(dir, (io) => runPackager("offload-packager", ["v3.bin", "--image=arch=gfx942"], io));
    expect(native.code).toBe(1);
    expect(native.stderr).toBe("offload-packager: error: Invalid data was encountered while parsing the file\n");
  });
});
