#!/usr/bin/env node
import { invokedName, processIO } from "../cli/io.js";
import { runPackager } from "../cli/offload-packager.js";
import { runSupervised } from "../process/supervisor.js";
import { isTrivialCommand } from "../process/trivial.js";

await runSupervised(import.meta.url, ({ argv1, args }) => runPackager(invokedName(argv1, "offload-packager"), args, processIO()), {
  inline: isTrivialCommand,
});
