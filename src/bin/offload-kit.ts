#!/usr/bin/env node
import { invokedName, processIO } from "../cli/io.js";
import { runOffloadKit } from "../cli/offload-kit.js";
import { loadNodeCodecs } from "../node/codecs.js";

// Inspection reads compressed bundles and offload binaries anywhere (folders too): load libzstd up front.
await loadNodeCodecs();

process.exitCode = await runOffloadKit(invokedName(process.argv[1], "offload-kit"), process.argv.slice(2), processIO(), process.stderr.isTTY === true);
