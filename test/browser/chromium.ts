/**
 * Debian's Chromium driven by playwright-core, for the browser tests: never a downloaded browser. The
 * tests run when /usr/bin/chromium is present and skip otherwise; under OFFLOAD_KIT_REQUIRE_NATIVE=1
 * (CI, which installs it) a missing Chromium fails them instead (test/native.ts).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext } from "playwright-core";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

export const CHROMIUM = nativeTool("chromium");

export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];

export interface Launched {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh Chromium with its own user-data-dir, removed on close. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Launched> {
  const userDataDir = mkdtempSync(join(tmpdir(), "offload-kit-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    viewport: { width: 1280, height: 900 },
    timeout: HANG_MS,
  });
  // Playwright's own 30 s waits judge the machine's load, not the page (test/limits.ts): only a hang fails.
  context.setDefaultTimeout(HANG_MS);
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export type { Browser };

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;

export interface Served {
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Runs the built `offload-kit serve --port=0` and reads the address from its first line. */
export async function servePage(args: readonly string[] = []): Promise<Served> {
  const child = spawn(BIN, ["serve", "--port=0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolve(line));
    child.once("exit", (code) => reject(new Error(`offload-kit serve exited with ${code}`)));
    setTimeout(() => reject(new Error(`offload-kit serve printed no address within ${HANG_MS / 1000} s`)), HANG_MS).unref();
  });
  return {
    url,
    process: child,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    }),
  };
}
