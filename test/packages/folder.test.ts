// Packages found while `check` walks a folder answer as packages named on the command line do: a folder
// holding a wheel, a .tar.gz, a plain fat object, a text file and a wheel without device code (in a
// subfolder, behind a symlinked folder that is not entered) checked whole and file by file.
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HOSTS, haveTools, tarEntry, tarOf, tool } from "./build.js";

const dir = scratchDir("offload-kit-pkg-folder-");
const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

/** A zip made by Info-ZIP's zip from `files` (name -> bytes); undefined when zip is missing. */
function zipOf(name: string, files: Record<string, Uint8Array>): boolean {
  const root = join(dir, `${name}.root`);
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), bytes);
  }
  return tool("sh", ["-c", `cd '${root}' && zip -q -r '${join(dir, "d", name)}' . < /dev/null`]) !== undefined;
}

mkdirSync(join(dir, "d/sub"), { recursive: true });
const app = readFileSync(join(HOSTS, "app"));
writeFileSync(join(dir, "d/b.tar.gz"), gzipSync(tarOf([tarEntry("lib/libboth.a", readFileSync(join(HOSTS, "libboth.a"))), tarEntry("doc/readme", Buffer.from("text\n"))])));
copyFileSync(join(HOSTS, "fat.o"), join(dir, "d/c-fat.o"));
writeFileSync(join(dir, "d/notes.txt"), "no device code\n");
// Outside the folder, reached only through a symlinked folder: find does not enter it, nor do we.
mkdirSync(join(dir, "outside"));
copyFileSync(join(HOSTS, "fat.o"), join(dir, "outside/hidden.o"));
symlinkSync("../outside", join(dir, "d/link"));
const zipped = haveTools("zip", "sh") && zipOf("sub/a.whl", { "torch/lib/app": app, "torch/__init__.py": Buffer.from("\n") })
  && zipOf("sub/pure.whl", { "pure/__init__.py": Buffer.from("print(1)\n") });

const NAMED = ["d/b.tar.gz", "d/c-fat.o", "d/sub/a.whl"];

describe("check of a folder holding packages", () => {
  it.each(["gfx906", "gfx1100"])("--json inputs equal those of the files named one by one (--gpu=%s)", async (gpu) => {
    if (!zipped) return;
    const walked = await kit("check", `--gpu=${gpu}`, "--json", "d");
    const named = await kit("check", `--gpu=${gpu}`, "--json", ...NAMED);
    expect(walked.stderr).toBe("");
    expect(walked.code).toBe(named.code);
    const w = JSON.parse(walked.stdout.toString());
    const n = JSON.parse(named.stdout.toString());
    expect(w.inputs.map((i: { path: string }) => i.path)).toEqual(NAMED);
    expect(w.inputs).toEqual(n.inputs);
    // Packages answer per package; the pure wheel and the text are skipped, the linked folder not entered.
    expect(w.inputs.map((i: { kind: string }) => i.kind)).toEqual(["package", "fat object", "package"]);
    expect(w.skipped).toEqual(["d/notes.txt", "d/sub/pure.whl"]);
    expect(JSON.stringify(w)).not.toContain("hidden.o");
    const wheel = w.inputs[2];
    expect(new Set(wheel.entries.map((e: { member: string }) => e.member))).toEqual(new Set(["torch/lib/app"]));
    if (gpu === "gfx1100") {
      expect(walked.code).toBe(1);
      expect(wheel.membersWithoutCode).toEqual(["torch/lib/app"]);
      expect(w.inputs[0].membersWithoutCode).toEqual(["lib/libboth.a"]);
    } else {
      expect(walked.code).toBe(0);
      expect(wheel.membersWithoutCode).toEqual([]);
    }
  });

  it("the text report names each package member as the walk names the package", async () => {
    if (!zipped) return;
    const walked = await kit("check", "--gpu=gfx1100", "d");
    const named = await kit("check", "--gpu=gfx1100", ...NAMED);
    const out = walked.stdout.toString();
    const conclusion = /\n(OK|FAIL)[^\n]*\n$/;
    // Only the closing line differs: the folder's run also counts the files it skipped.
    expect(out.replace(conclusion, "")).toBe(named.stdout.toString().replace(conclusion, ""));
    expect(out).toContain("d/sub/a.whl: package,");
    expect(out).toContain("members with no code for gfx1100: torch/lib/app");
    expect(out).toMatch(/FAIL: 3 of 3 inputs .*\(2 other files skipped\)\n$/);
  });

  it("a package in a folder that cannot be read to the end is reported as an input with its error", async () => {
    const bad = join(dir, "bad");
    mkdirSync(bad);
    const whole = gzipSync(tarOf([tarEntry("lib/app", app)]));
    writeFileSync(join(bad, "cut.tar.gz"), whole.subarray(0, Math.floor(whole.length * 0.8)));
    const walked = await kit("check", "--gpu=gfx906", "--json", "bad");
    const named = await kit("check", "--gpu=gfx906", "--json", "bad/cut.tar.gz");
    expect(walked.code).toBe(1);
    const w = JSON.parse(walked.stdout.toString());
    expect(w.inputs).toEqual(JSON.parse(named.stdout.toString()).inputs);
    expect(w.inputs[0].kind).toBe("package");
    expect(w.inputs[0].error.message).toMatch(/^bad\/cut\.tar\.gz(!lib\/app)?: at offset \d+: /);
  });
});
