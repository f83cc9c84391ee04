/** The registry: every parser the campaign runs, by name (`--parser NAME`). */
import type { FuzzTarget } from "./target.js";
import { amdgpuNoteTarget } from "./targets/amdgpu-note.js";
import { amdgpuYamlTarget } from "./targets/amdgpu-yaml.js";
import { archiveTarget } from "./targets/archive.js";
import { argsTarget } from "./targets/args.js";
import { bitcodeTarget } from "./targets/bitcode.js";
import { condaPathsTarget } from "./targets/conda.js";
import { bundleTarget } from "./targets/bundle.js";
import { bzip2EncodeTarget } from "./targets/bzip2-encode.js";
import { ccobTarget } from "./targets/ccob.js";
import { codeObjectTarget } from "./targets/code-object.js";
import { elfTarget } from "./targets/elf.js";
import { imageWriterTarget } from "./targets/image-writer.js";
import { objcopyTarget } from "./targets/objcopy.js";
import { lz4BlockTarget, nvFatbinTarget } from "./targets/nv-fatbin.js";
import { nvInfoTarget } from "./targets/nv-info.js";
import { offloadBinaryTarget } from "./targets/offload-binary.js";
import { packageWriterTarget } from "./targets/package-writer.js";
import { decodersTarget } from "./targets/decoders.js";
import { rpmTarget, zipTarget } from "./targets/packages.js";
import { cpioTarget, tarTarget } from "./targets/tar.js";
import { imageTarget, walkTarget } from "./targets/walk.js";
import { kpackMarkerTarget, kpackTarget } from "./targets/kpack.js";
import { targetIdTarget } from "./targets/target-id.js";
import { textBundleTarget } from "./targets/text-bundle.js";
import { wrapperTarget } from "./targets/wrapper.js";
import { xzEncodeTarget } from "./targets/xz-encode.js";

export const TARGETS: readonly FuzzTarget[] = [
  bundleTarget, textBundleTarget, ccobTarget, offloadBinaryTarget, archiveTarget, elfTarget, bitcodeTarget, targetIdTarget, argsTarget, wrapperTarget, objcopyTarget, zipTarget, rpmTarget,
  tarTarget, cpioTarget, imageTarget, walkTarget, decodersTarget, nvFatbinTarget, lz4BlockTarget, amdgpuNoteTarget, kpackTarget, kpackMarkerTarget, nvInfoTarget, amdgpuYamlTarget,
  codeObjectTarget,
  condaPathsTarget,
  xzEncodeTarget,
  bzip2EncodeTarget,
  imageWriterTarget,
  packageWriterTarget,
];

export function targetNamed(name: string): FuzzTarget | undefined {
  return TARGETS.find((t) => t.name === name);
}
