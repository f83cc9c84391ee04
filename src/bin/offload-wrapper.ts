// The program of the bin, run by src/process/launch.ts in a supervised worker (or inline).
import { invokedName, processIO } from "../cli/io.js";
import { runWrapper } from "../cli/offload-wrapper.js";
import { runCommand } from "../process/run.js";

await runCommand(({ argv1, args }) => runWrapper(invokedName(argv1, "offload-wrapper"), args, processIO()));
