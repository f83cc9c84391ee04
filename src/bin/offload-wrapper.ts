#!/usr/bin/env node
// offload-wrapper arrives with its own issue; until then it says so and exits 2.
process.stderr.write("offload-wrapper: not implemented yet\n");
process.exitCode = 2;
