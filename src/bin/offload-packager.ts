#!/usr/bin/env node
import { invokedName, processIO } from "../cli/io.js";
import { runPackager } from "../cli/offload-packager.js";

process.exitCode = runPackager(invokedName(process.argv[1], "offload-packager"), process.argv.slice(2), processIO());
