// `offload-kit serve` as a process: the address first on stdout, only the page's files, Host checked,
// bad options refused with the usual diagnostics. (The page itself is tested in test/browser/.)
import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;

async function started(args: string[]) {
  const child = spawn(BIN, ["serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`exited ${code}`)));
  });
  const stop = () => new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.kill("SIGINT");
  });
  return { first, stop };
}

function get(url: string, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: host === undefined ? {} : { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("offload-kit serve", () => {
  it("prints its address first, answers for the page's names only, and stops on SIGINT with status 0", async () => {
    const { first, stop } = await started(["--port=0"]);
    expect(first).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const port = new URL(first).port;
    expect(await get(first)).toBe(200);
    expect(await get(`${first}worker.js`, `localhost:${port}`)).toBe(200);
    expect(await get(first, `attacker.example:${port}`)).toBe(421);
    expect(await get(`${first}README.md`)).toBe(404);
    expect(await stop()).toBe(0);
  });

  it("refuses a bad port and a port in use, with the tool's diagnostics", async () => {
    const bad = spawnSync(BIN, ["serve", "--port=http"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/serve: error: --port must be a number from 0 to 65535, not 'http'/);
    const { first, stop } = await started(["--port=0"]);
    const busy = spawnSync(BIN, ["serve", `--port=${new URL(first).port}`], { encoding: "utf8", timeout: HANG_MS });
    expect(busy.status).toBe(1);
    expect(busy.stderr).toMatch(/error: cannot listen on 127\.0\.0\.1:\d+: the port is in use \(try --port=0\)/);
    await stop();
  });
});
