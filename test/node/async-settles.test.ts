// Every async API settles: when a codec or the Wasm core cannot load, the promise rejects with a clear
// error (never hangs), and a later call may succeed. The codec is made unavailable by mocking the libzstd
// bytes the library inlines (src/compress/zstd-bytes.generated.ts): they are not WebAssembly until the
// test lets the real ones through; a load that never answers is a fetch that never settles.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HANG_MS } from "../limits.js";

const state = vi.hoisted(() => ({ mode: "real" as "real" | "fail" }));

vi.mock("../../src/compress/zstd-bytes.generated.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/compress/zstd-bytes.generated.js")>();
  return {
    get ZSTD_WASM_BASE64() {
      // "<html>404": what a missing file served by a dev server decodes to.
      return state.mode === "fail" ? btoa("<html>404") : real.ZSTD_WASM_BASE64;
    },
  };
});

/** Fails the test instead of hanging it: every promise here must settle within `ms`. */
function settles<T>(promise: Promise<T>, ms = HANG_MS / 10): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms))]);
}

afterEach(() => {
  state.mode = "real";
  vi.useRealTimers();
});

describe("codecs that fail to load", () => {
  it("decompressBundle rejects with a clear error, and the next call succeeds", async () => {
    vi.resetModules();
    const { decompressBundle } = await import("../../src/bundler/api.js");
    // Made by clang-offload-bundler 19 (test/fixtures/README.md).
    const ccob = readFileSync(new URL("../fixtures/ccob/gfx90a.19.ccob", import.meta.url));
    state.mode = "fail";
    await expect(settles(decompressBundle(ccob))).rejects.toMatchObject({ name: "OffloadKitError", code: "CODEC_UNAVAILABLE", message: expect.stringMatching(/^libzstd could not be loaded: .*magic/) });
    // Still failing: rejected again, not left pending on the first failure.
    await expect(settles(decompressBundle(ccob))).rejects.toMatchObject({ code: "CODEC_UNAVAILABLE" });
    state.mode = "real";
    const bundle = await settles(decompressBundle(ccob));
    expect(Buffer.from(bundle.subarray(0, 24)).toString("latin1")).toBe("__CLANG_OFFLOAD_BUNDLE__");
  });

  it("an init that never settles is reported as a failure, not waited on forever", async () => {
    vi.resetModules();
    const zstd = await import("../../src/compress/zstd-wasm.js");
    vi.useFakeTimers();
    vi.stubGlobal("fetch", () => new Promise<never>(() => {}));
    const load = zstd.loadZstd("http://127.0.0.1:9/zstd.wasm");
    const outcome = load.then(() => "loaded", (e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(zstd.ZSTD_LOAD_TIMEOUT_MS + 1);
    expect(await outcome).toMatch(/did not initialise within 30000 ms/);
    vi.useRealTimers();
    vi.unstubAllGlobals();
    await expect(settles(zstd.loadZstd())).resolves.toBeUndefined();
    expect(zstd.zstdLoaded()).toBe(true);
  });

  it("compressBundle settles the same way", async () => {
    vi.resetModules();
    const { compressBundle } = await import("../../src/bundler/api.js");
    state.mode = "fail";
    await expect(settles(compressBundle(new Uint8Array(16)))).rejects.toMatchObject({ code: "CODEC_UNAVAILABLE" });
    state.mode = "real";
    await expect(settles(compressBundle(new Uint8Array(16)))).resolves.toBeInstanceOf(Uint8Array);
  });
});

describe("a Wasm core that fails to load", () => {
  it("initEngine rejects with ENGINE_UNAVAILABLE, the TS twin keeps serving, and a later call succeeds", async () => {
    vi.resetModules();
    const select = await import("../../src/engine/select.js");
    select.setEngine("ts");
    await expect(settles(select.initEngine(new Uint8Array([0, 0x61, 0x73, 0x6d, 9, 9, 9, 9])))).rejects.toMatchObject({
      name: "OffloadKitError", code: "ENGINE_UNAVAILABLE", message: expect.stringMatching(/^cannot load the Wasm core: /),
    });
    expect(select.engineKind()).toBe("ts");
    const wasm = readFileSync(new URL("../../build/offload-kit.wasm", import.meta.url));
    await expect(settles(select.initEngine(wasm))).resolves.toMatchObject({ kind: "wasm" });
    expect(select.engineKind()).toBe("wasm");
  });
});
