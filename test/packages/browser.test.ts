// The browser API on packages (src/browser/packages.ts), run in Node, which has the same
// DecompressionStream: each member's inspection equals inspectSource on the unpacked file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { inspectPackage, inspectSource } from "../../src/browser/index.js";
import { browserDecoders } from "../../src/browser/packages.js";
import { bytesSource } from "../../src/engine/source.js";
import { HOSTS, haveTools, tarEntry, tarOf, tool } from "./build.js";

const app = readFileSync(join(HOSTS, "app"));
const fat = readFileSync(join(HOSTS, "fat.o"));
const tar = () => tarOf([tarEntry("lib/app", app), tarEntry("lib/fat.o", fat), tarEntry("doc/readme", Buffer.from("text\n"))]);

function expectSame(result: Awaited<ReturnType<typeof inspectPackage>>, prefix: string) {
  expect(result).toBeDefined();
  expect(result!.problems).toEqual([]);
  expect(result!.members.map((m) => m.member.join("!"))).toEqual([`${prefix}lib/app`, `${prefix}lib/fat.o`]);
  for (const [m, bytes] of [[result!.members[0]!, app], [result!.members[1]!, fat]] as const) {
    const alone = inspectSource(bytesSource(bytes), m.report.path);
    expect(m.report).toEqual(alone.report);
    expect(m.sizes).toEqual(alone.sizes);
  }
}

describe("inspectPackage (browser API)", () => {
  it("a tar.gz through DecompressionStream", async () => {
    expectSame(await inspectPackage(bytesSource(gzipSync(tar())), "x.tar.gz"), "");
  });

  it("a tar.xz through xz-decompress", async () => {
    const xz = tool("xz", ["-c"], { input: tar() });
    if (xz === undefined) return;
    expectSame(await inspectPackage(bytesSource(xz), "x.tar.xz"), "");
  });

  it("an xz stream left before its end is cancelled: the next xz stream still decodes (xz-decompress holds one lock for all its streams)", async () => {
    // Larger than the decoder's output buffer, so the first chunk is not the end.
    const big = tarOf([tarEntry("lib/app", app), tarEntry("data", new Uint8Array(4 << 20).map((_, i) => (i * 7919) >>> 5))]);
    const xz = tool("xz", ["-c"], { input: big });
    if (xz === undefined) return;
    const whole = async () => {
      let n = 0;
      for await (const chunk of browserDecoders().decode("xz", (async function* () { yield xz; })())) n += chunk.length;
      return n;
    };
    for (let i = 0; i < 3; i++) {
      // Left after its first chunk, as a sniff of a tarball's first block or a walk that found its member leave it.
      for await (const chunk of browserDecoders().decode("xz", (async function* () { yield xz; })())) {
        expect(chunk.length).toBeGreaterThan(0);
        break;
      }
    }
    // Before the fix this never settled (the lock was never released); the test's own timeout would say so.
    expect(await whole()).toBe(big.length);
  });

  it("a tar.bz2 (legacy conda, tarballs) through the TypeScript bzip2 decoder", async () => {
    const bz = tool("bzip2", ["-c"], { input: tar() });
    if (bz === undefined) return;
    expectSame(await inspectPackage(bytesSource(bz), "x.tar.bz2"), "");
  });

  it("a wheel with deflate members (deflate-raw), nested in a tar", async () => {
    if (!haveTools("zip")) return;
    const dir = new URL("../fixtures/hosts/", import.meta.url).pathname;
    const wheel = tool("sh", ["-c", `cd '${dir}' && mkdir -p /tmp/okw-$$/lib && cp app fat.o /tmp/okw-$$/lib/ && cd /tmp/okw-$$ && zip -q -r - lib < /dev/null; rm -rf /tmp/okw-$$`]);
    if (wheel === undefined) return;
    expectSame(await inspectPackage(bytesSource(tarOf([tarEntry("dist/x.whl", wheel)])), "d.tar"), "dist/x.whl!");
  });

  it("not a package: undefined", async () => {
    expect(await inspectPackage(bytesSource(app), "app")).toBeUndefined();
  });
});
