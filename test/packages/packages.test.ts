// Packages made by the standard tools from the fixture fat binaries: what the walker hands the locator
// for each member equals what the locator says of the unpacked file, for every container and compression.
import { mkdirSync, readFileSync, writeFileSync, cpSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../cli/harness.js";
import { PAYLOADS, dockerImage, haveTools, expectedMembers, ociImage, stage, tarEntry, tarOf, tool, walkBytes } from "./build.js";
import type { Walked } from "./build.js";

let dir: string;
let root: string;
let expected: Map<string, unknown>;

beforeAll(() => {
  dir = scratchDir("offload-kit-packages-");
  root = stage(dir);
  expected = expectedMembers(root);
});

function expectPayloads(walked: Walked, prefix = "") {
  expect(walked.problems).toEqual([]);
  for (const [path, report] of expected) expect(walked.members.get(prefix + path), prefix + path).toEqual(report);
  expect(walked.members.has(`${prefix}usr/lib/readme.txt`)).toBe(true);
}

function tarball(compress?: string, format = "gnu"): Uint8Array | undefined {
  const tar = tool("tar", ["-C", root, `--format=${format}`, "-cf", "-", "."]);
  if (tar === undefined || compress === undefined) return tar;
  return tool(compress, ["-c"], { input: tar });
}

describe("tarballs", () => {
  it.each([
    ["tar (GNU long names)", undefined, "gnu"],
    ["tar (pax)", undefined, "pax"],
    ["tar.gz", "gzip", "gnu"],
    ["tar.xz", "xz", "pax"],
    ["tar.zst", "zstd", "gnu"],
    ["tar.bz2", "bzip2", "gnu"],
  ])("%s: every member located as the unpacked file", async (_label, compress, format) => {
    const bytes = tarball(compress, format);
    if (bytes === undefined) return;
    const walked = await walkBytes(bytes);
    expect(walked.walk?.format).toBe(compress ?? "tar");
    expectPayloads(walked);
    expect(walked.walk!.links).toBe(1);
  });
});

it("tar.xz through the WebAssembly xz decoder (xz-decompress; browsers, and Node without the xz program)", async () => {
  const bytes = tarball("xz");
  if (bytes === undefined) return;
  expectPayloads(await walkBytes(bytes, "pkg", { ...process.env, OFFLOAD_KIT_XZ: "wasm" }));
  const cut = await walkBytes(bytes.subarray(0, bytes.length - 100), "pkg", { ...process.env, OFFLOAD_KIT_XZ: "wasm" });
  expect(cut.problems.length).toBeGreaterThan(0);
});

describe("zip and wheels", () => {
  const zipped = (args: string, name: string): Buffer | undefined => {
    const out = join(dir, name);
    if (!haveTools("zip")) return undefined;
    if (tool("sh", ["-c", `cd '${root}' && zip -q ${args} '${out}' . < /dev/null`]) === undefined) return undefined;
    return readFileSync(out);
  };

  it.each([
    ["deflate", "-r -y"],
    ["stored", "-r -y -0"],
    ["zip64 (forced)", "-r -y -fz"],
  ])("%s", async (label, args) => {
    const bytes = zipped(args, `${label.replace(/\W/g, "")}.whl`);
    if (bytes === undefined) return;
    const walked = await walkBytes(bytes, "x.whl");
    expect(walked.walk?.format).toBe("zip");
    expectPayloads(walked);
  });

  it("data descriptors (zip written to a pipe)", async () => {
    if (!haveTools("zip")) return;
    const bytes = tool("sh", ["-c", `cd '${root}' && zip -q -r -D - . < /dev/null | cat`]);
    if (bytes === undefined) return;
    // Written to a pipe, zip cannot seek back: members have flag bit 3 and a data descriptor.
    expect(bytes.readUInt16LE(6) & 8).toBe(8);
    expectPayloads(await walkBytes(bytes));
  });

  it("a wheel inside a tar.gz inside a zip nests, each level named", async () => {
    const wheel = zipped("-r", "torch.whl");
    if (wheel === undefined || !haveTools("tar", "gzip")) return;
    const inner = join(dir, "nest");
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(inner, "torch.whl"), wheel);
    const tgz = tool("sh", ["-c", `tar -C ${inner} -cf - torch.whl | gzip -c`])!;
    writeFileSync(join(inner, "dist.tar.gz"), tgz);
    const outer = tool("sh", ["-c", `cd '${inner}' && zip -q - dist.tar.gz < /dev/null`])!;
    const walked = await walkBytes(outer, "outer.zip");
    expectPayloads(walked, "dist.tar.gz!torch.whl!");
  });
});

describe("Debian packages", () => {
  it.each(["xz", "gzip", "zstd"])("data.tar compressed with %s; control.tar skipped", async (compression) => {
    const debRoot = join(dir, `deb-${compression}`);
    cpSync(root, debRoot, { recursive: true, verbatimSymlinks: true });
    mkdirSync(join(debRoot, "DEBIAN"));
    writeFileSync(join(debRoot, "DEBIAN/control"), "Package: fat\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.com>\nDescription: t\n");
    const out = join(dir, `fat-${compression}.deb`);
    if (tool("dpkg-deb", [`-Z${compression}`, "--root-owner-group", "--build", debRoot, out]) === undefined) return;
    const walked = await walkBytes(readFileSync(out), "fat.deb");
    expect(walked.walk?.format).toBe("deb");
    expectPayloads(walked);
    expect([...walked.members.keys()].some((k) => k.includes("control"))).toBe(false);
  });
});

describe("RPMs (rpmbuild)", () => {
  it.each([["zstd", "w19.zstdio"], ["xz", "w6.xzdio"], ["gzip", "w9.gzdio"]])("payload compressed with %s", async (_label, payload) => {
    const top = join(dir, `rpm-${payload}`);
    mkdirSync(join(top, "SPECS"), { recursive: true });
    const spec = [
      "Name: fat", "Version: 1", "Release: 1", "Summary: t", "License: MIT", "BuildArch: noarch",
      "%global __os_install_post %{nil}", "%global debug_package %{nil}", "%global _build_id_links none",
      "%global _binaries_in_noarch_packages_terminate_build 0",
      "%description", "t", "%install", `cp -a ${root}/. %{buildroot}/`, "%files", "/usr/lib/*", "/opt/*", "",
    ].join("\n");
    writeFileSync(join(top, "SPECS/fat.spec"), spec);
    const built = tool("rpmbuild", ["--define", `_topdir ${top}`, "--define", `_binary_payload ${payload}`, "-bb", join(top, "SPECS/fat.spec")]);
    if (built === undefined) return;
    const walked = await walkBytes(readFileSync(join(top, "RPMS/noarch/fat-1-1.noarch.rpm")), "fat.rpm");
    expect(walked.walk?.format).toBe("rpm");
    expectPayloads(walked);
  });
});

describe("conda packages", () => {
  it(".conda: a zip of info-*.tar.zst and pkg-*.tar.zst", async () => {
    if (!haveTools("tar", "zstd", "zip")) return;
    const pkg = tool("sh", ["-c", `tar -C ${root} -cf - . | zstd -q -c`]);
    if (pkg === undefined) return;
    const work = join(dir, "conda");
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, "pkg-fat-1-0.tar.zst"), pkg);
    writeFileSync(join(work, "info-fat-1-0.tar.zst"), tool("sh", ["-c", `tar -C ${root} -cf - usr/lib/readme.txt | zstd -q -c`])!);
    writeFileSync(join(work, "metadata.json"), '{"conda_pkg_format_version": 2}');
    const conda = tool("sh", ["-c", `cd '${work}' && zip -q -0 - metadata.json info-fat-1-0.tar.zst pkg-fat-1-0.tar.zst < /dev/null`])!;
    const walked = await walkBytes(conda, "fat-1-0.conda");
    expectPayloads(walked, "pkg-fat-1-0.tar.zst!");
  });

  it("legacy .tar.bz2", async () => {
    const bytes = tarball("bzip2");
    if (bytes === undefined) return;
    expectPayloads(await walkBytes(bytes, "fat-1-0.tar.bz2"));
  });
});

describe("container images", () => {
  const app = () => readFileSync(join(root, "usr/lib/app"));
  const lower = () => tarOf([
    tarEntry("usr/lib/app", app()),
    tarEntry("usr/lib/replaced.so", app()),
    tarEntry("usr/lib/deleted.so", app()),
    tarEntry("opt/gone/", new Uint8Array(0), { type: "5" }),
    tarEntry("opt/gone/inner.so", app()),
  ]);
  const upper = () => tarOf([
    tarEntry("usr/lib/.wh.deleted.so", new Uint8Array(0)),
    tarEntry("usr/lib/replaced.so", Buffer.from("now a text file\n")),
    tarEntry("opt/gone/.wh..wh..opq", new Uint8Array(0)),
    tarEntry("opt/gone/new.so", app()),
    tarEntry("usr/.wh.never-existed", new Uint8Array(0)),
  ]);

  it.each([["OCI layout", ociImage], ["docker save", dockerImage]])("%s: layers applied, whiteouts honoured", async (_label, make) => {
    const walked = await walkBytes(make([lower(), upper()]), "image.tar");
    expect(walked.walk?.format).toBe("tar");
    const withCode = [...walked.members].filter(([, r]) => (r as { bundles: unknown[] }).bundles.length > 0).map(([k]) => k).sort();
    expect(withCode).toEqual(["opt/gone/new.so", "usr/lib/app"]);
    expect(walked.members.has("usr/lib/replaced.so")).toBe(true);
    expect(walked.members.has("usr/lib/deleted.so")).toBe(false);
    expect(walked.members.has("opt/gone/inner.so")).toBe(false);
    expect(walked.problems).toHaveLength(1);
    expect(walked.problems[0]).toMatchObject({ code: "IMAGE_WHITEOUT_UNUSED" });
    expect(walked.problems[0]!.message).toContain("usr/never-existed");
    expect(walked.members.get("usr/lib/app")).toEqual(expected.get("usr/lib/app"));
  });
});

it("a file that is no package is left to the locator", async () => {
  expect((await walkBytes(readFileSync(join(root, "usr/lib/app")))).walk).toBeUndefined();
  expect(Object.keys(PAYLOADS)).toHaveLength(3);
});
