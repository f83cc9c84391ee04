// Which runs the launcher keeps on the main thread (src/process/launch.ts): only those a worker would cost more
// than (help, version, serve, small regular inputs that neither compress nor decompress); everything whose
// length cannot be known from a stat goes to the supervised worker, where a signal can stop it.
import { execFileSync } from "node:child_process";
import { closeSync, ftruncateSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runsInline } from "../../src/process/launch.js";
import { scratchDir } from "../cli/harness.js";

let dir: string;
beforeAll(() => {
  dir = scratchDir("offload-kit-launch-");
  writeFileSync(join(dir, "small.bc"), "x".repeat(1000));
  writeFileSync(join(dir, "ccob.bc"), `CCOB${"x".repeat(100)}`);
  const fd = openSync(join(dir, "big.bin"), "w");
  ftruncateSync(fd, 5 * 1024 * 1024);
  closeSync(fd);
  mkdirSync(join(dir, "folder"));
  execFileSync("mkfifo", [join(dir, "fifo")]);
});

const inline = (bin: string, args: string[], env: NodeJS.ProcessEnv = {}) => runsInline(bin, args, dir, env);

describe("runsInline", () => {
  it("help, version and serve stay on the main thread", () => {
    expect(inline("offload-bundler", [])).toBe(true);
    expect(inline("offload-bundler", ["--version"])).toBe(true);
    expect(inline("offload-packager", ["-o", "x", "--help"])).toBe(true);
    expect(inline("offload-kit", ["serve", "big.bin"])).toBe(true);
  });

  it("small regular inputs run inline; option values and IDs that name no file count for nothing", () => {
    expect(inline("offload-bundler", ["-type=bc", "-unbundle", "-input=small.bc", "-targets=hip-amdgcn-amd-amdhsa--gfx906,host-x86_64-unknown-linux-gnu-", "-output=new.o"])).toBe(true);
    expect(inline("offload-packager", ["-o", "out", "--image=file=small.bc,triple=amdgcn-amd-amdhsa,arch=gfx906"])).toBe(true);
    expect(inline("offload-kit", ["ls", "small.bc"])).toBe(true);
  });

  it("anything whose length a stat cannot tell, or that may run long, goes to the worker", () => {
    expect(inline("offload-bundler", ["-list", "-type=bc", "-input=big.bin"])).toBe(false);
    expect(inline("offload-bundler", ["-list", "-type=bc", "-input=fifo"])).toBe(false);
    expect(inline("offload-bundler", ["-list", "-type=bc", "-input=-"])).toBe(false);
    expect(inline("offload-wrapper", ["--kind=openmp", "-o", "x", "-"])).toBe(false);
    expect(inline("offload-kit", ["check", "folder"])).toBe(false);
    expect(inline("offload-bundler", ["@args.rsp"])).toBe(false);
    expect(inline("offload-bundler", ["-type=bc", "-unbundle", "-input=ccob.bc", "-targets=x", "-output=o"])).toBe(false);
    expect(inline("offload-bundler", ["-type=bc", "-compress", "-input=small.bc", "-targets=x", "-output=o"])).toBe(false);
    expect(inline("offload-kit", ["ls", "small.bc"], { OFFLOAD_KIT_INLINE_BYTES: "0" })).toBe(false);
  });
});
