#!/usr/bin/env node
import { invokedName, processIO } from "../cli/io.js";
import { runOffloadKit } from "../cli/offload-kit.js";
import { mayNeedZstd } from "../cli/zstd-preload.js";
import { loadNodeCodecs } from "../node/codecs.js";

// libzstd costs ~12 MiB and ~15 ms to load: only when the first files are compressed or a folder is
// walked. Compressed data found later (embedded, deeper in a batch) is decoded on a helper worker.
const args = process.argv.slice(2);
if (mayNeedZstd(args.slice(1), process.env, process.cwd(), { sample: 16, directories: true })) {
  // Only a head start: if it fails, the run decodes on a helper worker and reports any failure itself.
  await loadNodeCodecs().catch(() => undefined);
}

process.exitCode = await runOffloadKit(invokedName(process.argv[1], "offload-kit"), args, processIO(), process.stderr.isTTY === true);
