#!/usr/bin/env node
// offload-packager arrives with its own issue; until then it says so and exits 2.
process.stderr.write("offload-packager: not implemented yet\n");
process.exitCode = 2;
