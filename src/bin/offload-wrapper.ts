#!/usr/bin/env node
import { invokedName, processIO } from "../cli/io.js";
import { runWrapper } from "../cli/offload-wrapper.js";

process.exitCode = runWrapper(invokedName(process.argv[1], "offload-wrapper"), process.argv.slice(2), processIO());
