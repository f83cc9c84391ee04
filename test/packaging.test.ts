// The package as users get it: exports that resolve to built files, bins that run without tsx, a
// browser-safe entry point (no node:* anywhere in its import graph), and the TS fallback where
// WebAssembly does not exist. Runs against dist/, which `npm test` builds first (pretest).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_VERSION } from "../src/version.js";

const root = resolve(new URL("..", import.meta.url).pathname);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** Every module reachable from `entry` through relative imports (TypeScript sources). */
function importGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (graph.has(file)) continue;
    const text = readFileSync(file, "utf8");
    const specifiers = [...text.matchAll(/(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\("([^"]+)"\)/g)].map((m) => m[1] ?? m[2]);
    graph.set(file, specifiers);
    for (const s of specifiers) {
      if (s.startsWith(".")) stack.push(resolve(dirname(file), s.replace(/\.js$/, ".ts")));
    }
  }
  return graph;
}

describe("package", () => {
  it("declares the four bins and they run from dist without tsx", () => {
    expect(Object.keys(pkg.bin).sort()).toEqual(["offload-binary", "offload-bundler", "offload-kit", "offload-packager", "offload-wrapper"]);
    for (const [name, file] of Object.entries<string>(pkg.bin)) {
      expect(existsSync(join(root, file)), file).toBe(true);
      // An ordinary ESM script for npm's shims (scripts/bundle-bins.mjs): node from PATH, no flags, no environment edits.
      const text = readFileSync(join(root, file), "utf8");
      expect(text.startsWith("#!/usr/bin/env node\n"), name).toBe(true);
      expect(text, name).not.toContain("NODE_EXTRA_CA_CERTS");
    }
    // Both ways of starting a bin: as an executable (through its #! line) and with node directly.
    const direct = execFileSync(join(root, pkg.bin["offload-bundler"]), ["--version"], { encoding: "utf8" });
    const viaNode = execFileSync(process.execPath, [join(root, pkg.bin["offload-bundler"]), "--version"], { encoding: "utf8" });
    expect(direct).toContain(PACKAGE_VERSION);
    expect(viaNode).toBe(direct);
  });

  it("has a version that matches src/version.ts", () => {
    expect(pkg.version).toBe(PACKAGE_VERSION);
  });

  it("exports resolve to built files, types first", () => {
    for (const [subpath, target] of Object.entries<unknown>(pkg.exports)) {
      if (typeof target === "string") {
        expect(existsSync(join(root, target)), subpath).toBe(true);
        continue;
      }
      const conditions = target as Record<string, string>;
      expect(Object.keys(conditions)[0], subpath).toBe("types");
      for (const file of Object.values(conditions)) expect(existsSync(join(root, file)), `${subpath}: ${file}`).toBe(true);
    }
    // Only the worker script has side effects (it answers messages when loaded): `import "offload-kit/browser-worker"`
    // in a worker of one's own must survive tree shaking.
    expect(pkg.sideEffects).toEqual(["./dist/browser/worker-entry.js"]);
    expect(pkg.type).toBe("module");
  });

  it("keeps node:* out of the browser entry points' import graphs", () => {
    for (const entry of ["src/index.ts", "src/formats/bundle.ts", "src/formats/text-bundle.ts", "src/formats/offload-binary.ts", "src/target-id/index.ts", "src/prune/index.ts", "src/prune/replace.ts", "src/elf-edit/index.ts", "src/engine/select.ts", "src/wrapper/index.ts", "src/browser/index.ts", "src/browser/worker-entry.ts", "src/inspector/main.ts"]) {
      const graph = importGraph(join(root, entry));
      expect(graph.size).toBeGreaterThan(0);
      for (const [file, specifiers] of graph) {
        const bad = specifiers.filter((s) => s.startsWith("node:") || ["fs", "path", "os", "child_process", "worker_threads"].includes(s));
        expect(bad, `${file} (reached from ${entry})`).toEqual([]);
        // import.meta.url differs by bundler and output format (an esbuild IIFE has none): loading never depends on it.
        const code = readFileSync(file, "utf8").split("\n").filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
        expect(code.filter((line) => line.includes("import.meta")), `${file} (reached from ${entry})`).toEqual([]);
      }
    }
  });

  it("puts the ELF editor in the worker the inspector page runs (its pruned download of linked libraries)", () => {
    const graph = importGraph(join(root, "src/browser/worker-entry.ts"));
    for (const file of ["src/prune/linked-elf.ts", "src/elf-edit/rewrite.ts", "src/elf-edit/hip-fatbin.ts"]) expect(graph.has(join(root, file)), file).toBe(true);
    expect(graph.has(join(root, "src/elf-edit/node.ts"))).toBe(false);
  });

  it("falls back to the TypeScript engine where WebAssembly does not exist", () => {
    // Node 24 no longer takes V8's --no-expose-wasm: take the global away before anything loads.
    const script = `delete globalThis.WebAssembly; import(${JSON.stringify(join(root, "dist/index.js"))}).then((m) => {
      const out = m.bundle({ type: "bc", targets: ["host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx906"], inputs: [new Uint8Array([1]), new Uint8Array([2])] });
      console.log(typeof WebAssembly, m.engineKind(), m.listBundleIds(out, "bc").join(","));
    })`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("undefined ts host-x86_64-unknown-linux-gnu-,hip-amdgcn-amd-amdhsa--gfx906");
  });

  it("uses Wasm by default and honours OFFLOAD_KIT_ENGINE", () => {
    const script = `import(${JSON.stringify(join(root, "dist/index.js"))}).then((m) => console.log(m.engineKind()))`;
    const kind = (env: Record<string, string>) =>
      spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, ...env } }).stdout.trim();
    expect(kind({ OFFLOAD_KIT_ENGINE: "" })).toBe("wasm");
    expect(kind({ OFFLOAD_KIT_ENGINE: "ts" })).toBe("ts");
    expect(kind({ OFFLOAD_KIT_ENGINE: "wasm" })).toBe("wasm");
  });
});
