/**
 * `offload-kit kpack ROOT --group=NAME [--prefix=P] [--compression=none|zstd-per-kernel] [--json]`: ROCm's kpack
 * split of an installed tree (src/kpack/node/split.ts): per-architecture `.kpack` archives in ROOT/.kpack, every
 * HIP host under ROOT rewritten in place to find its code objects there, as rocm-kpack's runtime loads them.
 */
import { resolve } from "node:path";
import { kpackTree } from "../../kpack/node/split.js";
import { unkpackFile } from "../../kpack/node/unsplit.js";
import { flagValue, listValue, stringValue } from "../args.js";
import type { Subcommand } from "./common.js";
import { JSON_OPTION, KIT_CATEGORY, VERSION_TEXT, examplesHelp, usageError } from "./common.js";
import { printWarning } from "../io.js";
import { runGuarded } from "../io.js";

export const kpack: Subcommand = {
  summary: "Split an installed tree's device code into rocm-kpack archives (ROOT/.kpack/GROUP_<arch>.kpack); hosts rewritten in place.",
  spec: () => ({
    overview:
      "offload-kit kpack: move the code objects of every HIP host binary under ROOT into per-architecture .kpack\n" +
      "archives in ROOT/.kpack, as ROCm's rocm-kpack split does; each host is rewritten in place (HIPK wrappers\n" +
      "pointing at a .rocm_kpack_ref marker naming ../.kpack/GROUP_@GFXARCH@.kpack, .hip_fatbin zero-paged: byte for\n" +
      "byte what rocm-kpack writes) so the ROCm runtime loads them from there.\n",
    options: [
      { name: "root", kind: "string", positional: true, description: "<root>" },
      { name: "group", kind: "string", valueName: "name", description: "Archive group name (rocm-kpack's artifact prefix): ROOT/.kpack/<name>_<arch>.kpack", category: KIT_CATEGORY },
      { name: "prefix", kind: "string", valueName: "path", description: "Put before each binary's path below ROOT in its TOC key (rocm-kpack: the artifact prefix, e.g. stage)", category: KIT_CATEGORY },
      { name: "compression", kind: "string", valueName: "scheme", description: "none (default) or zstd-per-kernel", category: KIT_CATEGORY },
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit kpack --group=myapp lib", what: "Move the code objects of every HIP binary under lib/ into lib/.kpack/myapp_<arch>.kpack" },
      { command: "offload-kit kpack --group=rocm --prefix=stage --compression=zstd-per-kernel /opt/rocm", what: "As TheRock's split does: TOC keys under stage/, each code object a zstd frame" },
    ]),
  }),
  run(values, { name, io }) {
    const root = listValue(values, "root")[0] ?? stringValue(values, "root");
    if (root === undefined || root === "") return usageError(io, name, "no root folder");
    const group = stringValue(values, "group");
    if (group === undefined || group === "" || /[/\\]/.test(group)) return usageError(io, name, "--group=<name> is required (no '/')");
    const compression = stringValue(values, "compression") || "none";
    if (compression !== "none" && compression !== "zstd-per-kernel") return usageError(io, name, `--compression must be none or zstd-per-kernel, not '${compression}'`);
    return runGuarded(io, name, () => {
      const prefix = stringValue(values, "prefix") || undefined;
      const result = kpackTree({ root: resolve(io.cwd, root), group, compression, ...(prefix !== undefined ? { prefix } : {}) });
      for (const s of result.skipped) printWarning(io, name, `${s.path}: not split: ${s.reason}`);
      if (flagValue(values, "json")) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
      } else {
        for (const b of result.binaries) io.stdout(`${b.path}: ${b.wrappers} fat binar${b.wrappers === 1 ? "y" : "ies"} kpack'd as '${b.kernelName}', ${b.before} -> ${b.after} bytes\n`);
        for (const a of result.archives) io.stdout(`${a.path}: ${a.codeObjects} code object${a.codeObjects === 1 ? "" : "s"} for ${a.arch}, ${a.size} bytes\n`);
        if (result.binaries.length === 0) io.stdout("no HIP host binary found\n");
      }
      return 0;
    });
  },
};

/** `offload-kit unkpack FILE... [--json]`: kpack'd hosts (split by `offload-kit kpack` or by rocm-kpack) made fat binaries again, in place, from the archives installed beside them. */
export const unkpack: Subcommand = {
  summary: "Make kpack'd hosts (offload-kit kpack's or rocm-kpack's) fat binaries again, in place, from the .kpack archives installed beside them: FILE...",
  spec: () => ({
    overview:
      "offload-kit unkpack: put back into each host binary the code objects its HIPK wrappers find in the installed\n" +
      ".kpack archives (every architecture there), as clang-offload-bundler bundles in .hip_fatbin with HIPF wrappers.\n" +
      "Undoes 'offload-kit kpack' and rocm-kpack's split (its zero-paged .hip_fatbin is given its pages back).\n",
    options: [{ name: "files", kind: "string", list: true, positional: true, description: "<file>..." }, JSON_OPTION],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit unkpack split/bin/app", what: "Put the code objects its archives hold back into app's .hip_fatbin" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    return runGuarded(io, name, () => {
      const results = files.map((file) => unkpackFile(resolve(io.cwd, file), io.env));
      if (flagValue(values, "json")) io.stdout(`${JSON.stringify(results, null, 2)}\n`);
      else for (const r of results) io.stdout(`${r.path}: ${r.wrappers} wrapper${r.wrappers === 1 ? "" : "s"}, ${r.codeObjects} code objects put back, ${r.before} -> ${r.after} bytes\n`);
      return 0;
    });
  },
};
