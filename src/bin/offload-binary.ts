// The program of the bin, run by src/process/launch.ts in a supervised worker (or inline).
import { invokedName, processIO } from "../cli/io.js";
import { runOffloadBinary } from "../cli/offload-binary.js";
import { runCommand } from "../process/run.js";

await runCommand(({ argv1, args }) => runOffloadBinary(invokedName(argv1, "offload-binary"), args, processIO()));
