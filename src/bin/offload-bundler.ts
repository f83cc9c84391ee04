#!/usr/bin/env node
import { processIO, invokedName } from "../cli/io.js";
import { runBundler } from "../cli/offload-bundler.js";

process.exitCode = runBundler(invokedName(process.argv[1], "offload-bundler"), process.argv.slice(2), processIO());
