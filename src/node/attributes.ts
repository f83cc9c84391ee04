/**
 * Extended attributes and ACLs of a replaced file, kept as `cp --preserve=all` keeps them. An output renamed
 * over an existing file is a new inode: without this, `--in-place` would drop `user.*` attributes, SELinux
 * labels and file capabilities (`security.*`), `trusted.*` (root's) and POSIX ACLs (`system.posix_acl_*`).
 * Node has no xattr API, so the attr package's tools do it: `getfattr -d -m - -e hex --absolute-names` reads
 * every attribute of all the group's destinations in one process, and `setfattr --restore=-` writes them onto
 * the temporary files, only when there was something to copy. A missing getfattr is said once per run.
 *
 * getfattr names each file in its dump as `# file: <path>` with the backslash, newline and carriage return
 * written `\ooo` (attr's quote(); every other byte as it is, measured with attr 2.5); `quotePath` writes a name
 * the same way, to find a destination's block and to name its temporary file in the dump handed to setfattr.
 */
import { spawnSync } from "node:child_process";

const C_LOCALE = { ...process.env, LC_ALL: "C" };

/** A path as getfattr and setfattr write and read it in a dump. */
export function quotePath(path: string): string {
  return path.replace(/[\\\n\r]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
}

/** Attribute lines (`name=0x…`) per destination that has any; undefined when getfattr is not installed. */
export function readAttributes(paths: readonly string[]): Map<string, readonly string[]> | undefined {
  const found = new Map<string, readonly string[]>();
  if (paths.length === 0) return found;
  const run = spawnSync("getfattr", ["-d", "-m", "-", "-e", "hex", "--absolute-names", "--", ...paths], {
    encoding: "utf8",
    env: C_LOCALE,
    maxBuffer: 64 << 20,
  });
  if (run.error !== undefined) return undefined;
  const byHeader = new Map(paths.map((path) => [quotePath(path), path]));
  // Blocks are separated by an empty line; a file without attributes has none.
  for (const block of run.stdout.split("\n\n")) {
    const lines = block.split("\n").filter((line) => line !== "");
    const header = lines[0];
    if (header === undefined || !header.startsWith("# file: ")) continue;
    const path = byHeader.get(header.slice("# file: ".length));
    if (path !== undefined && lines.length > 1) found.set(path, lines.slice(1));
  }
  return found;
}

/** `security.capability`'s hex value among a file's attribute lines, or null. */
export function capabilityOf(lines: readonly string[] | undefined): string | null {
  const line = lines?.find((l) => l.startsWith("security.capability="));
  return line === undefined ? null : line.slice("security.capability=".length);
}

/**
 * Writes `attributes` (path → lines) onto other files (`targets`: the same path → the file to set them on).
 * Returns setfattr's complaint when some could not be set (a `security.*` or `trusted.*` one without root),
 * else undefined.
 */
export function writeAttributes(attributes: ReadonlyMap<string, readonly string[]>, targets: ReadonlyMap<string, string>): string | undefined {
  let dump = "";
  for (const [path, lines] of attributes) {
    const target = targets.get(path);
    if (target !== undefined) dump += `# file: ${quotePath(target)}\n${lines.join("\n")}\n\n`;
  }
  if (dump === "") return undefined;
  const run = spawnSync("setfattr", ["--restore=-"], { input: dump, encoding: "utf8", env: C_LOCALE });
  if (run.error !== undefined) return "setfattr is not installed";
  if (run.status !== 0) return run.stderr.trim() || `setfattr exited with ${run.status}`;
  return undefined;
}

let toolWarned = false;

/** Whether the warning that getfattr is missing was already given in this run (it is given once). */
export function firstMissingToolWarning(): boolean {
  if (toolWarned) return false;
  toolWarned = true;
  return true;
}
