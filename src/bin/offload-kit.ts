// The program of the bin, run by src/process/launch.ts in a supervised worker (or inline).
import { invokedName, processIO } from "../cli/io.js";
import { runOffloadKit } from "../cli/offload-kit.js";
import { mayNeedZstd } from "../cli/zstd-preload.js";
import { loadNodeCodecs } from "../compress/node/codecs.js";
import { runCommand } from "../process/run.js";

await runCommand(async ({ argv1, args, stderrIsTTY }) => {
  // libzstd costs ~12 MiB and ~15 ms to load: only when the first files are compressed or a folder is
  // walked. Compressed data found later (embedded, deeper in a batch) is decoded on a helper worker.
  if (mayNeedZstd(args.slice(1), process.env, process.cwd(), { sample: 16, directories: true })) {
    // Only a head start: if it fails, the run decodes on a helper worker and reports any failure itself.
    await loadNodeCodecs().catch(() => undefined);
  }
  return runOffloadKit(invokedName(argv1, "offload-kit"), args, processIO(), stderrIsTTY);
});
