#!/usr/bin/env node
import { invokedName, processIO } from "../cli/io.js";
import { runWrapper } from "../cli/offload-wrapper.js";
import { runSupervised } from "../process/supervisor.js";
import { isTrivialCommand } from "../process/trivial.js";

await runSupervised(import.meta.url, ({ argv1, args }) => runWrapper(invokedName(argv1, "offload-wrapper"), args, processIO()), {
  inline: isTrivialCommand,
});
