// Which bzip2 decoder for browsers (and for Node without the bzip2 program)? Decodes one .tar.bz2 with a
// candidate and prints bytes, wall and CPU seconds, MB per CPU second and RSS (one process per run; the
// README's "Packages" table has the figures and the command that made the file).
//
//   npm install --prefix /tmp/bz unbzip2-stream@1.4.3 bz2@1.0.1 seek-bzip@2.0.0 @foxglove/wasm-bz2@0.3.0
//   for c in bz2 seek-bzip wasm-bz2 unbzip2-stream ours; do
//     /usr/bin/time -f '%M KB' node bench/bzip2-decoders.cjs $c real.tar.bz2 /tmp/bz/node_modules/; done
//   bzip2 -dc real.tar.bz2 > /dev/null   # the native reference (GNU time for its CPU)
// `ours` is src/packages/bzip2.ts as built into dist/ (npm run build first).
const fs = require("fs");
const path = require("path");
const [name, file, modules = "/tmp/bz/node_modules/"] = process.argv.slice(2);
const t0 = performance.now();
const c0 = process.cpuUsage();
function done(n) {
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  console.log(JSON.stringify({ name, bytes: n, wall: +((performance.now() - t0) / 1000).toFixed(2), cpu: +cpu.toFixed(2), mbPerCpuSecond: +(n / 1e6 / cpu).toFixed(1), rssMiB: Math.round(process.memoryUsage().rss / 1048576) }));
}
(async () => {
  if (name === "unbzip2-stream") {
    const unbzip2 = require(modules + "unbzip2-stream");
    let n = 0;
    fs.createReadStream(file).pipe(unbzip2()).on("data", (d) => (n += d.length)).on("end", () => done(n));
  } else if (name === "bz2") {
    done(require(modules + "bz2").decompress(fs.readFileSync(file)).length);
  } else if (name === "seek-bzip") {
    done(require(modules + "seek-bzip").decode(fs.readFileSync(file)).length);
  } else if (name === "wasm-bz2") {
    const bzip2 = await require(modules + "@foxglove/wasm-bz2").init();
    // Whole-buffer only, and the output size must be known in advance (here: a generous guess).
    done(bzip2.decompress(fs.readFileSync(file), 8 * fs.statSync(file).size).length);
  } else if (name === "ours") {
    const { decodeBzip2 } = await import(path.join(__dirname, "../dist/packages/bzip2.js"));
    const input = (async function* () {
      for await (const c of fs.createReadStream(file, { highWaterMark: 1 << 20 })) yield new Uint8Array(c.buffer, c.byteOffset, c.length);
    })();
    let n = 0;
    for await (const chunk of decodeBzip2(input)) n += chunk.length;
    done(n);
  } else {
    throw new Error(`unknown decoder '${name}'`);
  }
})();
