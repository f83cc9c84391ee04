// The program of the bin, run by src/process/launch.ts in a supervised worker (or inline).
import { invokedName, processIO } from "../cli/io.js";
import { runPackager } from "../cli/offload-packager.js";
import { runCommand } from "../process/run.js";

await runCommand(({ argv1, args }) => runPackager(invokedName(argv1, "offload-packager"), args, processIO()));
