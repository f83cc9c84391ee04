// `offload-kit verify`, run as a whole process of dist/bin/offload-kit.js: OK and findings in text and
// --json, and the exit statuses (0 all OK, 1 findings or an unreadable file, 2 usage).
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { syntheticExecutable } from "../elf-edit/synthetic.js";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { installed, setU64 } from "./elf.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;

function kit(cwd: string, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 26 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("offload-kit verify (whole process)", () => {
  const dir = scratchDir("offload-kit-verify-cli-");
  const good = syntheticExecutable([[100, 200], [300, 50]]).bytes;
  const bad = good.slice();
  setU64(bad, 32, bad.length + 4096);
  writeFileSync(join(dir, "good.elf"), good);
  writeFileSync(join(dir, "bad.elf"), bad);

  it("prints OK and exits 0 when every file passes", () => {
    const r = kit(dir, "verify", "good.elf");
    expect(r).toEqual({ code: 0, stdout: "good.elf: OK (linked ELF, 2 fat binaries, 2 wrappers)\n", stderr: "" });
  });

  it("prints one line per file, with the first finding, and a total (issue 27 item 4)", () => {
    const r = kit(dir, "verify", "good.elf", "bad.elf");
    expect(r.code).toBe(1);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("good.elf: OK (linked ELF, 2 fat binaries, 2 wrappers)");
    expect(lines[1]).toMatch(/^bad\.elf: \d+ findings \(linked ELF, 0 fat binaries, 2 wrappers\); the first: PHDRS_PAST_EOF at 0x20 \(e_phoff\): program headers are longer than binary/);
    expect(lines.slice(2)).toEqual(["total (2 files): 1 OK, 1 with findings", ""]);
  });

  it("-v prints each file's findings and exits 1 when any has one", () => {
    const r = kit(dir, "verify", "-v", "good.elf", "bad.elf");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("good.elf: OK (linked ELF, 2 fat binaries, 2 wrappers)");
    expect(lines[1]).toMatch(/^bad\.elf: \d+ findings \(linked ELF, 0 fat binaries, 2 wrappers\)$/);
    expect(lines[2]).toBe(`  PHDRS_PAST_EOF at 0x20 (e_phoff): program headers are longer than binary of size ${bad.length}: e_phoff = 0x${(bad.length + 4096).toString(16)}, e_phnum = 2, e_phentsize = 56`);
  });

  it("--json: every file with its findings", () => {
    const r = kit(dir, "verify", "--json", "good.elf", "bad.elf", "missing.elf");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    const json = JSON.parse(r.stdout);
    expect(json.ok).toBe(false);
    expect(json.files.map((f: { path: string; ok: boolean }) => [f.path, f.ok])).toEqual([["good.elf", true], ["bad.elf", false], ["missing.elf", false]]);
    expect(json.files[0].fatBinaries.map((f: { format: string; entries: string[] }) => [f.format, f.entries.length])).toEqual([["bundle", 3], ["bundle", 3]]);
    expect(json.files[1].findings[0]).toEqual({
      code: "PHDRS_PAST_EOF", field: "e_phoff", offset: 32, subject: "program header table",
      message: expect.stringMatching(/^program headers are longer than binary/),
    });
    expect(json.files[2].error.message).toBe("'missing.elf': No such file or directory");
  });

  it("exits 1 for a file that cannot be read, 2 for a usage error", () => {
    expect(kit(dir, "verify", "missing.elf")).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("'missing.elf': No such file or directory") });
    expect(kit(dir, "verify")).toMatchObject({ code: 2, stderr: expect.stringContaining("no input files") });
    expect(kit(dir, "verify", "--bogus", "good.elf").code).toBe(2);
  });

  it("librocrand pruned by offload-kit prune verifies", () => {
    const library = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
    if (installed(library) === undefined) return;
    expect(kit(dir, "prune", "--keep=gfx90a", library, "-o", "rand.so").code).toBe(0);
    expect(kit(dir, "verify", library, "rand.so")).toEqual({
      code: 0, stderr: "", stdout: `${library}: OK (linked ELF, 1 fat binary, 1 wrapper)\nrand.so: OK (linked ELF, 1 fat binary, 1 wrapper)\ntotal (2 files): 2 OK\n`,
    });
  }, HANG_MS);
});
