// A real CUDA library from a package: Debian trixie's non-free libnvjpeg12 (CUDA 12.4; LZ4-compressed entries,
// sm_50..sm_90), downloaded at test time through the private apt configuration scripts/fetch-cuobjdump.sh made
// beside cuobjdump. Extracted cubins and PTX equal cuobjdump's byte for byte (110 LZ4 entries decoded), the .deb
// lists what the unpacked library lists, and a container no wrapper points at is reported as such. Runs where
// cuobjdump is; skips when apt cannot fetch, fails then under OFFLOAD_KIT_REQUIRE_NATIVE=1.
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { hasNative, runNative } from "../native.js";
import { fetchNvjpeg } from "./debian-nv.js";

describe.runIf(hasNative("cuobjdump"))("libnvjpeg12 (LZ4 entries) vs cuobjdump", () => {
  it("extract equals cuobjdump -xelf all -xptx all; the .deb lists what the library lists", async (ctx) => {
    const dir = scratchDir("offload-kit-nvjpeg-");
    const fetched = fetchNvjpeg(dir);
    if (fetched === undefined) return ctx.skip();
    const { deb, library } = fetched;
    const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

    const listed = await kit("ls", "--json", library);
    expect(listed.code).toBe(0);
    const report = JSON.parse(listed.stdout.toString()).files[0];
    const entries = report.bundles.flatMap((b: { nvFatbin: { entries: { compression: string }[] } }) => b.nvFatbin.entries);
    expect(entries.filter((e: { compression: string }) => e.compression === "lz4").length).toBeGreaterThan(50);
    expect(report.bundles.some((b: { nvFatbin: { wrappers: number } }) => b.nvFatbin.wrappers === 0)).toBe(true);

    const theirs = join(dir, "cuobjdump");
    const ours = join(dir, "ours");
    mkdirSync(theirs);
    const native = runNative("cuobjdump", ["-xelf", "all", "-xptx", "all", library], { cwd: theirs });
    expect(native.status, native.stderr).toBe(0);
    expect((await kit("extract", `--out-dir=${ours}`, library)).code).toBe(0);
    const names = readdirSync(theirs).sort();
    expect(names.length).toBeGreaterThan(100);
    expect(readdirSync(ours).sort()).toEqual(names);
    for (const name of names) expect(Buffer.compare(readFileSync(join(ours, name)), readFileSync(join(theirs, name))), name).toBe(0);

    const packaged = await kit("ls", "--json", join(dir, deb));
    expect(packaged.code).toBe(0);
    const member = JSON.parse(packaged.stdout.toString()).files[0].members.find((m: { bundles: unknown[] }) => m.bundles.length > 0);
    expect(member.bundles.map((b: { offset: number; entries: unknown[] }) => [b.offset, b.entries.length]))
      .toEqual(report.bundles.map((b: { offset: number; entries: unknown[] }) => [b.offset, b.entries.length]));
  }, HANG_MS);
});
