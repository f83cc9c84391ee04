// The program of the bin, run by src/process/launch.ts in a supervised worker (or inline).
import { processIO, invokedName } from "../cli/io.js";
import { runBundler } from "../cli/offload-bundler.js";
import { mayNeedZstd } from "../cli/zstd-preload.js";
import { loadNodeCodecs } from "../compress/node/codecs.js";
import { runCommand } from "../process/run.js";

await runCommand(async ({ argv1, args }) => {
  // libzstd loads asynchronously; the run itself is synchronous. Load it only when the run may use it.
  if (mayNeedZstd(args, process.env, process.cwd())) {
    // Only a head start: if it fails, the run decodes on a helper worker and reports any failure itself.
    await loadNodeCodecs().catch(() => undefined);
  }
  return runBundler(invokedName(argv1, "offload-bundler"), args, processIO());
});
