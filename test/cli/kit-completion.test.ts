// Issue 27 item 2: `offload-kit completion bash|zsh|fish`. The bash script is sourced in a real bash and its
// function called as bash calls it (COMP_LINE/COMP_POINT, COMP_WORDS/COMP_CWORD split at bash's word breaks);
// the fish script is asked with fish's own `complete -C`; the zsh script is syntax-checked and loaded after
// compinit (driving zsh's completion widgets needs a terminal). zsh and fish are tested where installed
// (`apt-get install zsh fish`); they are not CI requirements, so they skip rather than fail when absent, also
// under OFFLOAD_KIT_REQUIRE_NATIVE=1. Whole processes, through dist/bin/offload-kit.js.
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { check } from "../../src/cli/kit/check.js";
import { completionModel, gpuNames } from "../../src/cli/kit/completion.js";
import { prune } from "../../src/cli/kit/prune.js";
import { sizes } from "../../src/cli/kit/sizes.js";
import { AMDGCN_PROCESSORS } from "../../src/target-id/index.js";
import { HANG_MS } from "../limits.js";
import { scratchDir } from "./harness.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = join(ROOT, "dist/bin/offload-kit.js");

function kit(args: readonly string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dir = scratchDir("offload-kit-completion-");
const scripts = { bash: join(dir, "offload-kit.bash"), zsh: join(dir, "_offload-kit"), fish: join(dir, "offload-kit.fish") };
for (const [shell, path] of Object.entries(scripts)) {
  const r = kit(["completion", shell]);
  if (r.code !== 0) throw new Error(`offload-kit completion ${shell}: ${r.stderr}`);
  writeFileSync(path, r.stdout);
}
// Files to complete: two bundles and a folder.
const files = join(dir, "files");
mkdirSync(join(files, "out"), { recursive: true });
writeFileSync(join(files, "app.bundle"), "");
writeFileSync(join(files, "app.hipfb"), "");

/** bash's COMP_WORDS for a line: split at blanks, and at '=' and ':' (COMP_WORDBREAKS), which stand alone. */
function bashWords(line: string): string[] {
  const words: string[] = [];
  for (const blank of line.split(/\s+/)) {
    for (const piece of blank.split(/([=:])/)) if (piece !== "") words.push(piece);
  }
  if (line === "" || /\s$/.test(line)) words.push("");
  return words;
}

/** What the bash function offers for the line typed so far (the cursor at its end), as bash would call it. */
function bashComplete(line: string): string[] {
  const words = bashWords(line);
  const script = `source "$1"; shift; COMP_LINE="$1"; COMP_POINT=\${#COMP_LINE}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ));
_offload_kit offload-kit "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync("bash", ["-c", script, "bash", scripts.bash, line, ...words], { cwd: files, encoding: "utf8", timeout: HANG_MS });
  if (r.status !== 0) throw new Error(`bash: ${r.stderr}`);
  return r.stdout.split("\n").filter((l) => l !== "");
}

describe("offload-kit completion", () => {
  it("prints a script for bash, zsh and fish; another shell, or none, is a usage error", () => {
    expect(kit(["completion", "bash"]).stdout).toContain("complete -F _offload_kit offload-kit\n");
    expect(kit(["completion", "zsh"]).stdout).toMatch(/^#compdef offload-kit\n/);
    expect(kit(["completion", "fish"]).stdout).toContain("complete -c offload-kit -f\n");
    const tcsh = kit(["completion", "tcsh"]);
    expect(tcsh.code).toBe(2);
    expect(tcsh.stderr).toContain("no completion for 'tcsh': give one of bash, zsh, fish");
    expect(kit(["completion"]).code).toBe(2);
    expect(kit(["--help"]).stdout).toMatch(/^ {2}completion +Print a shell completion script/m);
  });

  it("the model is read from the option specs: prune's options, check's --gpu, sizes --by's words", () => {
    const model = completionModel({ check, prune, sizes });
    const pruneModel = model.find((c) => c.name === "prune")!;
    // Every option --help shows, generic ones included, and nothing hidden.
    const shown = prune.spec().options.filter((o) => !o.positional && !o.hidden).flatMap((o) => [o.name, ...(o.aliases ?? []).map((a) => a.name)]);
    expect(pruneModel.options.map((o) => o.name).sort()).toEqual([...shown, "help", "version"].sort());
    expect(pruneModel.options.find((o) => o.name === "keep")!.value).toEqual({ kind: "gpus", list: true });
    expect(pruneModel.options.find((o) => o.name === "out-dir")!.value).toEqual({ kind: "dirs" });
    expect(pruneModel.options.find((o) => o.name === "dry-run")!.value).toBeUndefined();
    expect(model.find((c) => c.name === "check")!.options.find((o) => o.name === "gpu")!.value).toEqual({ kind: "gpus", list: false });
    expect(model.find((c) => c.name === "sizes")!.options.find((o) => o.name === "by")!.value).toEqual({ kind: "words", words: ["target", "processor", "bundle"] });
    expect(gpuNames()).toEqual(expect.arrayContaining([...AMDGCN_PROCESSORS.map((p) => p.name), "sm_90", "native"]));
  });
});

describe("bash: sourced and called as bash calls it", () => {
  it("the script is valid bash", () => {
    expect(spawnSync("bash", ["-n", scripts.bash], { encoding: "utf8" }).status).toBe(0);
  });

  it("commands", () => {
    expect(bashComplete("offload-kit ")).toEqual(expect.arrayContaining(["ls", "check", "prune", "completion", "version", "help"]));
    expect(bashComplete("offload-kit pr")).toEqual(["prune"]);
    expect(bashComplete("offload-kit c")).toEqual(["check", "compress", "completion"]);
  });

  it("options of prune, value-taking ones with their '='", () => {
    expect(bashComplete("offload-kit prune --")).toEqual(
      ["--allow-empty", "--copy", "--drop=", "--drop-ptx", "--dry-run", "--help", "--in-place", "--json", "--keep=", "--level=", "--out-dir=", "--progress", "--remove-files", "--verbose", "--version"]);
    expect(bashComplete("offload-kit prune -")).toContain("-o");
    expect(bashComplete("offload-kit prune --k")).toEqual(["--keep="]);
  });

  it("processors after --keep= (readline keeps what precedes the '='), features after ':', list items after ','", () => {
    expect(bashComplete("offload-kit prune --keep=gfx90")).toEqual(["gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c"]);
    expect(bashComplete("offload-kit prune --keep=")).toEqual(expect.arrayContaining(["gfx90a", "gfx1100", "gfx11-generic", "sm_80", "native"]));
    expect(bashComplete("offload-kit prune --keep=nat")).toEqual(["native"]);
    // After ':' bash's word is what follows it.
    expect(bashComplete("offload-kit prune --keep=gfx90a:")).toEqual(["sramecc+", "sramecc-", "xnack+", "xnack-"]);
    expect(bashComplete("offload-kit prune --keep=gfx90a:xnack-:")).toEqual(["sramecc+", "sramecc-"]);
    expect(bashComplete("offload-kit prune --keep=gfx1100:")).toEqual([]);
    expect(bashComplete("offload-kit prune --drop=gfx90a:xnack+,gfx110")).toEqual(
      ["xnack+,gfx1100", "xnack+,gfx1101", "xnack+,gfx1102", "xnack+,gfx1103"]);
    expect(bashComplete("offload-kit prune --keep=gfx906,gfx94")).toEqual(["gfx906,gfx940", "gfx906,gfx941", "gfx906,gfx942"]);
    // The value as the next word, and check's --gpu.
    expect(bashComplete("offload-kit check --gpu gfx94")).toEqual(["gfx940", "gfx941", "gfx942"]);
    expect(bashComplete("offload-kit check --gpu=sm_9")).toEqual(["sm_90", "sm_90a"]);
  });

  it("other values from the specs: words, offload kinds, shells", () => {
    expect(bashComplete("offload-kit sizes --by=")).toEqual(["target", "processor", "bundle"]);
    expect(bashComplete("offload-kit check --kind=h")).toEqual(["hip", "hipv4"]);
    expect(bashComplete("offload-kit compress --format=")).toEqual(["2", "3"]);
    expect(bashComplete("offload-kit completion ")).toEqual(["bash", "zsh", "fish"]);
    expect(bashComplete("offload-kit prune --level=")).toEqual([]);
  });

  it("files for operands and -o, folders for --out-dir", () => {
    expect(bashComplete("offload-kit prune app.")).toEqual(["app.bundle", "app.hipfb"]);
    expect(bashComplete("offload-kit check --gpu=gfx90a ap")).toEqual(["app.bundle", "app.hipfb"]);
    expect(bashComplete("offload-kit prune -o app.b")).toEqual(["app.bundle"]);
    expect(bashComplete("offload-kit prune --out-dir=")).toEqual(["out"]);
    expect(bashComplete("offload-kit ls ").sort()).toEqual(["app.bundle", "app.hipfb", "out"]);
  });
});

/** A shell on PATH, or undefined. */
function shellOnPath(name: string): string | undefined {
  for (const folder of (process.env.PATH ?? "").split(delimiter).filter((d) => d !== "")) {
    try {
      accessSync(join(folder, name), constants.X_OK);
      return join(folder, name);
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

const fish = shellOnPath("fish");
const zsh = shellOnPath("zsh");

describe("fish and zsh", () => {
  it.skipIf(fish === undefined)("fish: valid, and fish's own `complete -C` offers commands, options, processors and files", () => {
    expect(spawnSync(fish!, ["--no-execute", scripts.fish]).status).toBe(0);
    const ask = (line: string) => {
      const r = spawnSync(fish!, ["-c", `source ${scripts.fish}; complete -C '${line}'`], { cwd: files, encoding: "utf8", timeout: HANG_MS });
      if (r.status !== 0) throw new Error(`fish: ${r.stderr}`);
      return r.stdout.split("\n").filter((l) => l !== "").map((l) => l.split("\t")[0]!);
    };
    expect(ask("offload-kit pr")).toEqual(["prune"]);
    expect(ask("offload-kit prune --dr")).toEqual(["--drop", "--drop-ptx", "--dry-run"]);
    expect(ask("offload-kit prune --keep=gfx90")).toEqual(["gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c"].map((g) => `--keep=${g}`));
    expect(ask("offload-kit prune --keep=gfx90a:")).toEqual(["sramecc+", "sramecc-", "xnack+", "xnack-"].map((f) => `--keep=gfx90a:${f}`));
    expect(ask("offload-kit sizes --by=p")).toEqual(["--by=processor"]);
    expect(ask("offload-kit prune app.")).toEqual(["app.bundle", "app.hipfb"]);
  });

  it.skipIf(zsh === undefined)("zsh: valid, and loads after compinit, registering _offload_kit for offload-kit", () => {
    expect(spawnSync(zsh!, ["-n", scripts.zsh], { encoding: "utf8" }).status).toBe(0);
    const r = spawnSync(zsh!, ["-f", "-c", `autoload -U compinit && compinit -u -D && source ${scripts.zsh} && print -r -- $_comps[offload-kit]`], { encoding: "utf8", timeout: HANG_MS });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("_offload_kit\n");
  });
});
