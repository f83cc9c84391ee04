// Real Debian packages for tests, as CI can fetch them: `apt-get download NAME` into a folder.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";

const REQUIRE = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";

/** Downloads a package's .deb into `dir`; undefined when apt cannot (then the test skips, or fails in CI). */
export function download(dir: string, name: string): string | undefined {
  try {
    execFileSync("apt-get", ["download", name], { cwd: dir, stdio: "pipe" });
    return readdirSync(dir).find((f) => f.startsWith(`${name}_`) && f.endsWith(".deb"));
  } catch (e) {
    if (REQUIRE) throw new Error(`apt-get download ${name} failed (OFFLOAD_KIT_REQUIRE_NATIVE=1): ${(e as Error).message}`);
    return undefined;
  }
}
