// `offload-kit ls --objdump` against `llvm-objdump-19 --offloading`: raw offload binaries written by the
// native packager (several images, every image and offload kind, extra keys, missing arch), ELF objects
// embedding them for several targets (clang-19 -fembed-offload-object), and malformed inputs. stdout must be
// identical, the exit code too, and the error text after "error: ".
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir } from "../cli/harness.js";
import { hasNative } from "../native.js";

const OBJDUMP = "llvm-objdump-19";
const PACKAGER = "clang-offload-packager-19";
const CLANG = "clang-19";

const dir = mkdtempSync(join(tmpdir(), "offload-kit-objdump-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(tool: string, args: string[]): void {
  const r = spawnSync(tool, args, { cwd: dir, encoding: "latin1" });
  if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")}: ${r.stderr}`);
}

const files: string[] = [];

/** Error text after "<tool>: error: ", so the tool names do not matter. */
function errorText(stderr: string): string {
  return stderr.replace(/^.*?: error: /gm, "");
}

describe.skipIf(!hasNative(OBJDUMP) || !hasNative(PACKAGER))("ls --objdump vs llvm-objdump-19 --offloading", () => {
  beforeAll(() => {
    for (const [name, text] of [["a.o", "IMG1"], ["b.bc", "IMG2xx"], ["c.cubin", "C"], ["f.fatbin", "F"], ["k.s", "PTX"], ["n.elf", "N"]]) {
      writeFileSync(join(dir, name!), text!);
    }
    run(PACKAGER, [
      "-o", "all.bin",
      "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp",
      "--image=file=b.bc,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda,feature=+ptx70",
      "--image=file=c.cubin,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=hip",
      "--image=file=f.fatbin,triple=t,kind=sycl",
      "--image=file=k.s,triple=t,arch=,kind=none",
      "--image=file=n.elf,triple=t,arch=a,arch=b",
    ]);
    run(PACKAGER, ["-o", "one.bin", "--image=file=a.o,triple=x86_64-unknown-linux-gnu,arch=native"]);
    files.push("all.bin", "one.bin");
    const all = readFileSync(join(dir, "all.bin"));
    const bad = new Uint8Array(all);
    bad[4] = 2;
    writeFileSync(join(dir, "v2.bin"), bad);
    writeFileSync(join(dir, "cut.bin"), all.subarray(0, all.length - 8));
    writeFileSync(join(dir, "tail.bin"), Buffer.concat([all, Buffer.from("trailing")]));
    const shortSize = new Uint8Array(all);
    shortSize[8] = 0x20;
    writeFileSync(join(dir, "size.bin"), shortSize);
    files.push("v2.bin", "cut.bin", "tail.bin", "size.bin");
    if (hasNative(CLANG)) {
      writeFileSync(join(dir, "h.c"), "int main(void) { return 0; }\n");
      const targets = ["x86_64-linux-gnu", "i386-linux-gnu", "aarch64-linux-gnu", "aarch64_be-linux-gnu", "riscv64-linux-gnu", "riscv32-linux-gnu",
        "powerpc64le-linux-gnu", "powerpc64-linux-gnu", "powerpc-linux-gnu", "s390x-linux-gnu", "arm-linux-gnueabi", "armeb-linux-gnueabi",
        "mips-linux-gnu", "mips64el-linux-gnuabi64", "sparcv9-linux-gnu", "loongarch64-linux-gnu", "hexagon-unknown-elf", "bpfel"];
      for (const target of targets) {
        const out = `h-${target}.o`;
        const r = spawnSync(CLANG, [`--target=${target}`, "-c", "h.c", "-o", out, "-Xclang", "-fembed-offload-object=all.bin"], { cwd: dir });
        if (r.status === 0) files.push(out);
      }
    }
  });

  it("prints the same for every input", async () => {
    expect(files.length).toBeGreaterThan(8);
    for (const file of files) {
      const theirs = spawnSync(OBJDUMP, ["--offloading", file], { cwd: dir, encoding: "latin1" });
      const ours = await runInDir(dir, (io) => runOffloadKit("offload-kit", ["ls", "--objdump", file], io));
      expect({ file, stdout: ours.stdout.toString("latin1"), code: ours.code, error: errorText(ours.stderr) }).toEqual({
        file, stdout: theirs.stdout, code: theirs.status, error: errorText(theirs.stderr),
      });
    }
  });
});
