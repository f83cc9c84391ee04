/**
 * Debian non-free CUDA packages for differential tests, fetched at test time through the private apt
 * configuration scripts/fetch-cuobjdump.sh made beside cuobjdump. Undefined when apt cannot fetch (the test
 * skips); under OFFLOAD_KIT_REQUIRE_NATIVE=1 that is a failure instead.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { nativeTool } from "../native.js";

const REQUIRE = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";

/** `apt-get download PACKAGE` into `dir`: the .deb's name, or undefined. */
export function downloadDebianPackage(pkg: string, dir: string): string | undefined {
  const config = join(dirname(nativeTool("cuobjdump")!), "apt", "apt.conf");
  try {
    if (!existsSync(config)) throw new Error(`${config} is missing: run scripts/fetch-cuobjdump.sh`);
    execFileSync("apt-get", ["download", "-qq", pkg], { cwd: dir, stdio: "pipe", env: { ...process.env, APT_CONFIG: config } });
    return readdirSync(dir).find((f) => f.startsWith(`${pkg}_`) && f.endsWith(".deb"));
  } catch (e) {
    if (REQUIRE) throw new Error(`apt-get download ${pkg} failed (OFFLOAD_KIT_REQUIRE_NATIVE=1): ${(e as Error).message}`);
    return undefined;
  }
}

/** libnvjpeg12's .deb unpacked into `dir`: the library's path, or undefined when it cannot be fetched. */
export function fetchNvjpeg(dir: string): { deb: string; library: string } | undefined {
  const deb = downloadDebianPackage("libnvjpeg12", dir);
  if (deb === undefined) return undefined;
  execFileSync("dpkg-deb", ["-x", deb, "unpacked"], { cwd: dir });
  const libDir = join(dir, "unpacked/usr/lib/x86_64-linux-gnu");
  return { deb, library: join(libDir, readdirSync(libDir).find((f) => /^libnvjpeg\.so\.\d+\.\d+/.test(f))!) };
}
