// One rewrite of a linked HIP library keeping only one GPU's entries (host entries stay), as a whole
// process for bench/elf-edit.mjs to time: prints the dropped entries' bytes and the bytes saved.
// Usage: node bench/elf-edit-prune.mjs INPUT OUTPUT GPU   (GPU: a processor, e.g. gfx90a)
import { keepBundleEntries } from "../dist/elf-edit/compose.js";
import { rewriteHipFatbinFile } from "../dist/elf-edit/node.js";
import { readBinaryBundle } from "../dist/formats/bundle.js";

const [input, output, gpu] = process.argv.slice(2);
const keep = (id) => id.startsWith("host-") || new RegExp(`--${gpu}(:|$)`).test(id);
let dropped = 0;
const plan = rewriteHipFatbinFile(input, output, {
  bundles: (bundle) => {
    if (bundle.format !== "bundle") return undefined;
    const read = readBinaryBundle(bundle.source);
    if (read.kind === "bundle") for (const entry of read.bundle.entries) if (!keep(entry.id)) dropped += entry.size;
    return keepBundleEntries(bundle.source, keep);
  },
});
console.log(JSON.stringify({ inputSize: plan.inputSize, outputSize: plan.outputSize, dropped, saved: plan.inputSize - plan.outputSize, fatbins: plan.bundles.length, split: plan.split }));
