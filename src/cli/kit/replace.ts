/**
 * `offload-kit replace --entry=ID [--bundle=N] --with=FILE FILE (-o OUT | --in-place | --dry-run) [--json]`:
 * one code object swapped for another in any container prune edits: bundle files (binary, text, CCOB), fat
 * objects, archives, offload binaries (raw or in `.llvm.offloading`) and linked ELF files (src/prune/replace.ts).
 */
import { loadNodeCodecs } from "../../compress/node/codecs.js";
import { utf8ToByteString } from "../../formats/bytes.js";
import { OffloadKitError } from "../../engine/errors.js";
import { FileSource } from "../../node/file-source.js";
import { REPLACEMENT_LIMIT, planReplace } from "../../prune/replace.js";
import type { PlannedEdit } from "../../prune/index.js";
import { editFiles } from "../../prune/node.js";
import { flagValue, listValue, parseLlvmInt, stringValue } from "../args.js";
import { runGuarded } from "../io.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, usageError, verboseOption } from "./common.js";
import { LEVEL_OPTION, OUTPUT_OPTIONS, editJson, editOptions, sizeLine } from "./outputs.js";

export const replace: Subcommand = {
  summary: "Swap one code object: --entry=ID [--bundle=N] --with=FILE FILE (-o OUT | --in-place | --dry-run).",
  spec: () => ({
    overview: "offload-kit replace: swap one entry's code object in a bundle file, fat object, archive, offload binary or linked HIP executable or library\n",
    options: [
      FILES_OPTION,
      { name: "entry", kind: "string", valueName: "id", description: "Entry ID whose code object is replaced (as `offload-kit ls` prints it)", category },
      { name: "bundle", kind: "string", valueName: "n", description: "The bundle to edit, counted from 0 in file order (in a linked ELF file, the fat binary), when several hold the entry", category },
      { name: "with", kind: "string", valueName: "file", description: "The new code object", category },
      // OUTPUT_OPTIONS' --verbose says "every entry"; replace's own (below) says what its rows are.
      ...OUTPUT_OPTIONS.filter((o) => o.name !== "verbose"),
      LEVEL_OPTION("zstd level when a compressed bundle is re-encoded (default: the one found in it)"),
      JSON_OPTION,
      verboseOption("each place the entry was replaced (bundle, member, fat binary)"),
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit replace --entry=hipv4-amdgcn-amd-amdhsa--gfx906 --with=gfx906.co --dry-run examples/sample/app.hipfb", what: "Say what swapping the gfx906 code object would change; write nothing" },
      { command: "offload-kit replace --entry=hipv4-amdgcn-amd-amdhsa--gfx90a --bundle=1 --with=fixed.co -o libfoo.fixed.so libfoo.so", what: "Swap the gfx90a code object of the library's second fat binary, into a new file" },
    ]),
  }),
  run: async (values, { name, io }) => {
    const files = listValue(values, "files");
    if (files.length !== 1) return usageError(io, name, files.length === 0 ? "no input file" : "replace edits one file");
    const entry = stringValue(values, "entry");
    const withFile = stringValue(values, "with");
    if (entry === "" || withFile === "") return usageError(io, name, "give --entry=ID and --with=FILE");
    const options = editOptions(values, io);
    if (typeof options === "string") return usageError(io, name, options);
    const { destination, level, json, dryRun, report } = options;
    const verbose = flagValue(values, "verbose");
    if (destination.kind === "out-dir") return usageError(io, name, "replace writes one file: give -o <file>, --in-place or --dry-run");
    const bundleText = stringValue(values, "bundle");
    const bundle = bundleText === "" ? undefined : parseLlvmInt(bundleText);
    if (bundle === undefined && bundleText !== "") return usageError(io, name, `--bundle must be a bundle index (from 0), not '${bundleText}'`);
    if (bundle !== undefined && bundle < 0) return usageError(io, name, `--bundle must be a bundle index (from 0), not '${bundleText}'`);
    const codecs = await loadNodeCodecs();
    return runGuarded(io, name, () => {
      let payload: FileSource;
      try {
        // Read at offsets like any input; a stream (/dev/zero, a FIFO) is spooled only up to the limit.
        payload = FileSource.open(withFile, { limit: REPLACEMENT_LIMIT, what: "the replacement (--with)" });
      } catch (e) {
        if (!(e instanceof OffloadKitError)) throw e;
        const message = e.code === "INPUT_TOO_LARGE" ? e.message : `the replacement (--with) ${e.message}`;
        throw new OffloadKitError(e.code, message, { field: "--with", offset: e.offset, cause: e });
      }
      let edits;
      try {
        edits = editFiles(files, destination, codecs, (source, input): PlannedEdit & { replaced: readonly string[] } =>
          planReplace(source, { entry: utf8ToByteString(entry), bundle, payload, codecs, name: input, level }));
      } finally {
        payload.close();
      }
      const edit = edits[0];
      if (edit.error !== undefined) throw edit.error;
      if (json) {
        report(`${JSON.stringify({ operation: "replace", dryRun, entry, files: edits.map((e) => ({ ...editJson(e), replaced: e.planned?.replaced ?? [] })), warnings: [] }, null, 2)}\n`);
      } else {
        // One line: the file, its sizes, and how often the entry was replaced; -v says where.
        const replaced = edit.planned!.replaced;
        report(`${sizeLine(edit, dryRun).slice(0, -1)}; ${dryRun ? "would replace" : "replaced"} ${entry} ${replaced.length === 1 ? "once" : `${replaced.length} times`}\n`);
        if (verbose) for (const where of replaced) report(`  replaced ${entry}${where === "" ? "" : ` (${where})`}\n`);
        for (const note of edit.planned!.notes) report(`  note: ${note}\n`);
      }
      return 0;
    });
  },
};
