// Issue 26 item 2: prune, compress and decompress of a container image tarball write an image tarball. Images
// built here with tar, gzip and zstd (a docker save legacy layout with uncompressed layers, `<id>/layer.tar`,
// `<config hex>.json` and repositories; an OCI layout with a nested index and gzip, zstd and uncompressed
// layers, one with a whiteout of a library below it) are pruned, and the output is judged from the outside:
// every blob's sha256 is its name and every descriptor's digest and size are those of the blob it names, each
// config's diff_ids are the sha256 of its layers decoded, `tar -t` lists every layer, untouched layers keep
// their bytes and digests, a library that a whiteout deletes is not edited, and each edited library is the
// single-file prune's bytes. skopeo, where installed, copies the output (checking every digest as it reads).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { hasNative } from "../native.js";
import { HOSTS, haveTools, tarEntry, tarOf } from "./build.js";

const dir = scratchDir("offload-kit-image-write-");
const tools = haveTools("tar", "gzip", "zstd");
// skopeo judges the outputs where installed; .ci/run installs it, and OFFLOAD_KIT_REQUIRE_NATIVE=1 makes its absence fail.
const skopeo = hasNative("skopeo");

const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const digest = (bytes: Uint8Array) => `sha256:${hex(bytes)}`;

/** A layer tar made by GNU tar from `files` (path -> fixture name, or text), in a fresh folder. */
function layerTar(name: string, files: Record<string, { fixture?: string; text?: string }>): Buffer {
  const root = join(dir, "layers", name);
  for (const [path, what] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    if (what.fixture !== undefined) copyFileSync(join(HOSTS, what.fixture), join(root, path));
    else writeFileSync(join(root, path), what.text ?? "");
  }
  return execFileSync("tar", ["-c", "--sort=name", "--owner=0", "--group=0", "--mtime=@0", "-C", root, "."], { maxBuffer: 1 << 30 });
}

type Method = "gzip" | "zstd" | "none";
function compress(tar: Buffer, method: Method): Buffer {
  if (method === "none") return tar;
  return execFileSync(method, ["-c", ...(method === "zstd" ? ["-q"] : ["-n"])], { input: tar, maxBuffer: 1 << 30 });
}
function decode(blob: Buffer): Buffer {
  if (blob[0] === 0x1f && blob[1] === 0x8b) return gunzipSync(blob);
  if (blob.readUInt32LE(0) === 0xfd2fb528) return execFileSync("zstd", ["-dc", "-q"], { input: blob, maxBuffer: 1 << 30 });
  return blob;
}

function configOf(layers: readonly Buffer[]): Buffer {
  return Buffer.from(JSON.stringify({
    architecture: "amd64", os: "linux", config: { Env: ["PATH=/usr/bin"] },
    rootfs: { type: "layers", diff_ids: layers.map(digest) },
    history: layers.map((_, i) => ({ created: "2026-01-01T00:00:00Z", created_by: `step ${i}` })),
  }));
}

/** An OCI layout tar: index.json -> a nested index -> a manifest; layers compressed as asked. */
function ociLayout(name: string, layers: readonly Buffer[], methods: readonly Method[], docker25 = false): string {
  const root = join(dir, name);
  mkdirSync(join(root, "blobs/sha256"), { recursive: true });
  const put = (bytes: Buffer) => {
    writeFileSync(join(root, "blobs/sha256", hex(bytes)), bytes);
    return digest(bytes);
  };
  const types: Record<Method, string> = { gzip: "+gzip", zstd: "+zstd", none: "" };
  const config = configOf(layers);
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: put(config), size: config.length },
    layers: layers.map((layer, i) => {
      const blob = compress(layer, methods[i]!);
      return { mediaType: `application/vnd.oci.image.layer.v1.tar${types[methods[i]!]}`, digest: put(blob), size: blob.length };
    }),
  }));
  const nested = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [{ mediaType: "application/vnd.oci.image.manifest.v1+json", digest: put(manifest), size: manifest.length, platform: { architecture: "amd64", os: "linux" } }],
  }));
  writeFileSync(join(root, "index.json"), JSON.stringify({
    schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [{ mediaType: "application/vnd.oci.image.index.v1+json", digest: put(nested), size: nested.length, annotations: { "org.opencontainers.image.ref.name": "t:1" } }],
  }));
  writeFileSync(join(root, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}');
  // docker 25 and later save this layout with a manifest.json naming the same blobs by path.
  const parsed = JSON.parse(manifest.toString());
  if (docker25) writeFileSync(join(root, "manifest.json"), JSON.stringify([{ Config: blobPath(parsed.config.digest), RepoTags: ["t:1"], Layers: parsed.layers.map((l: { digest: string }) => blobPath(l.digest)) }]));
  execFileSync("tar", ["-c", "-f", `${name}.tar`, "-C", root, "oci-layout", "index.json", ...(docker25 ? ["manifest.json"] : []), "blobs"], { cwd: dir });
  return `${name}.tar`;
}

const blobPath = (d: string) => `blobs/${d.replace(":", "/")}`;

/** A docker save tar in the legacy layout: <id>/layer.tar, <id>/json, <id>/VERSION, <config hex>.json, manifest.json, repositories. */
function dockerSave(name: string, layers: readonly Buffer[]): string {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  const ids = layers.map((layer, i) => hex(Buffer.from(`v1 id ${i} ${hex(layer)}`)));
  layers.forEach((layer, i) => {
    mkdirSync(join(root, ids[i]!));
    writeFileSync(join(root, ids[i]!, "layer.tar"), layer);
    writeFileSync(join(root, ids[i]!, "VERSION"), "1.0");
    writeFileSync(join(root, ids[i]!, "json"), JSON.stringify({ id: ids[i], ...(i > 0 ? { parent: ids[i - 1] } : {}) }));
  });
  const config = configOf(layers);
  writeFileSync(join(root, `${hex(config)}.json`), config);
  writeFileSync(join(root, "manifest.json"), JSON.stringify([{ Config: `${hex(config)}.json`, RepoTags: ["t:1"], Layers: ids.map((id) => `${id}/layer.tar`) }]));
  writeFileSync(join(root, "repositories"), JSON.stringify({ t: { "1": ids[ids.length - 1] } }));
  execFileSync("tar", ["-c", "-f", `${name}.tar`, "-C", root, ...readdirSync(root).sort()], { cwd: dir });
  return `${name}.tar`;
}

/** The files of an image tar, unpacked by GNU tar. */
function unpack(tar: string): string {
  const out = join(dir, `x-${tar}`);
  mkdirSync(out, { recursive: true });
  execFileSync("tar", ["-x", "-f", tar, "-C", out], { cwd: dir });
  return out;
}

interface Judged {
  /** Layer blob bytes, per image, bottom first (uncompressed tars as decoded). */
  layers: { path: string; blob: Buffer; tar: Buffer }[];
}

/**
 * The judge: every blob named by a digest has that sha256; every descriptor (index.json, nested indexes,
 * manifests) names a blob that is there, of its size; the config's diff_ids are the decoded layers' sha256;
 * `tar -t` lists every layer; docker's manifest.json names files that are there.
 */
function judge(root: string): Judged {
  const blobs = join(root, "blobs/sha256");
  if (existsSync(blobs)) for (const name of readdirSync(blobs)) expect(hex(readFileSync(join(blobs, name))), `blobs/sha256/${name}`).toBe(name);
  const layers: Judged["layers"] = [];
  const checkImage = (configPath: string, layerPaths: readonly string[]) => {
    const config = JSON.parse(readFileSync(join(root, configPath), "utf8"));
    expect(config.rootfs.diff_ids).toHaveLength(layerPaths.length);
    expect(config.history).toHaveLength(layerPaths.length);
    layerPaths.forEach((path, i) => {
      const blob = readFileSync(join(root, path));
      const tar = decode(blob);
      expect(digest(tar), `diff_ids[${i}]`).toBe(config.rootfs.diff_ids[i]);
      const listing = spawnSync("tar", ["-t"], { input: tar, maxBuffer: 1 << 30 });
      expect(listing.status, `tar -t ${path}: ${listing.stderr}`).toBe(0);
      layers.push({ path, blob, tar });
    });
  };
  const descriptor = (d: { digest: string; size: number }) => {
    const path = join(root, "blobs", ...d.digest.split(":"));
    const bytes = readFileSync(path);
    expect(bytes.length, d.digest).toBe(d.size);
    expect(digest(bytes)).toBe(d.digest);
    return bytes;
  };
  const walk = (json: { manifests?: { digest: string; size: number }[]; config?: { digest: string; size: number }; layers?: { digest: string; size: number }[] }) => {
    for (const d of json.manifests ?? []) walk(JSON.parse(descriptor(d).toString()));
    if (json.config !== undefined && json.layers !== undefined) {
      descriptor(json.config);
      json.layers.forEach(descriptor);
      checkImage(join("blobs", ...json.config.digest.split(":")), json.layers.map((l) => join("blobs", ...l.digest.split(":"))));
    }
  };
  if (existsSync(join(root, "manifest.json"))) {
    for (const image of JSON.parse(readFileSync(join(root, "manifest.json"), "utf8"))) {
      if (/^[0-9a-f]{64}\.json$/.test(image.Config)) expect(hex(readFileSync(join(root, image.Config)))).toBe(image.Config.slice(0, 64));
      checkImage(image.Config, image.Layers);
    }
  }
  if (existsSync(join(root, "index.json"))) walk(JSON.parse(readFileSync(join(root, "index.json"), "utf8")));
  return { layers };
}

/** A file of a layer tar (GNU tar reads it). */
function member(tar: Buffer, path: string): Buffer {
  return execFileSync("tar", ["-x", "-O", `./${path}`], { input: tar, maxBuffer: 1 << 30 });
}

/** The single-file prune of a fixture. */
async function single(fixture: string, ...args: string[]): Promise<Buffer> {
  const out = `single-${fixture}-${args.join("")}`;
  const r = await kit(...args, "-o", out, join(HOSTS, fixture));
  expect([r.code, r.stderr]).toEqual([0, ""]);
  return readFileSync(join(dir, out));
}

describe.skipIf(!tools)("image tarballs in, image tarballs out", () => {
  it("OCI layout (nested index; gzip, zstd and plain layers; a whiteout): digests, diff_ids, untouched layers, whiteouts, single-file bytes", async () => {
    const l0 = layerTar("o0", { "usr/lib/app": { fixture: "app" }, "usr/lib/fat.o": { fixture: "fat.o" } });
    const l1 = layerTar("o1", { "usr/lib/libboth.a": { fixture: "libboth.a" }, "etc/readme": { text: "hi\n" } });
    const l2 = layerTar("o2", { "usr/lib/.wh.app": { text: "" }, "etc/other": { text: "x\n" } });
    const l3 = layerTar("o3", { "opt/fat.o": { fixture: "fat.o" } });
    const image = ociLayout("oci", [l0, l1, l2, l3], ["gzip", "zstd", "gzip", "none"]);
    const before = judge(unpack(image));
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "oci-out.tar", image);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    // The app beside the whiteout is not counted: 3 libraries with device code in the image's filesystem.
    expect(r.stdout).toMatch(/^oci\.tar: image package, 20 members, 3 with device code, 3 changed, 3 layers, 1 config, 1 manifest, 1 index, index\.json rewritten, 51200 -> \d+ bytes/m);
    expect(r.stdout).not.toMatch(/usr\/lib\/app/);
    const after = judge(unpack("oci-out.tar"));
    expect(after.layers).toHaveLength(4);
    // Layer 2 holds no device code: the same blob. The others changed, compressed as they were.
    expect(after.layers[2]!.path).toBe(before.layers[2]!.path);
    expect(after.layers[2]!.blob.equals(before.layers[2]!.blob)).toBe(true);
    for (const i of [0, 1, 3]) expect(after.layers[i]!.path).not.toBe(before.layers[i]!.path);
    expect(after.layers[0]!.blob.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(after.layers[1]!.blob.readUInt32LE(0)).toBe(0xfd2fb528);
    expect(after.layers[3]!.blob.equals(after.layers[3]!.tar)).toBe(true);
    // usr/lib/app is deleted by layer 2's whiteout: not edited; fat.o beside it is.
    expect(member(after.layers[0]!.tar, "usr/lib/app").equals(readFileSync(join(HOSTS, "app")))).toBe(true);
    const fat = await single("fat.o", "prune", "--keep=gfx90a", "--allow-empty");
    expect(member(after.layers[0]!.tar, "usr/lib/fat.o").equals(fat)).toBe(true);
    expect(member(after.layers[3]!.tar, "opt/fat.o").equals(fat)).toBe(true);
    expect(member(after.layers[1]!.tar, "usr/lib/libboth.a").equals(await single("libboth.a", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    expect(member(after.layers[1]!.tar, "etc/readme").toString()).toBe("hi\n");
    // Old blobs are gone from the output; nothing else was added.
    const blobs = readdirSync(join(dir, "x-oci-out.tar/blobs/sha256"));
    expect(blobs).toHaveLength(readdirSync(join(dir, "x-oci.tar/blobs/sha256")).length);
    // Each edited member is named in the report under its layer's new digest.
    const named = [...r.stdout.matchAll(/-> oci-out\.tar!blobs\/sha256\/([0-9a-f]{64})!/g)].map((m) => m[1]);
    expect(named).toHaveLength(3);
    for (const name of named) expect(blobs).toContain(name);
    if (skopeo) {
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", "oci-archive:oci-out.tar", "dir:skopeo-oci"], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it("docker save (legacy layout): Config renamed to its digest, layer.tar paths kept, repositories kept, the library is the single-file prune's", async () => {
    const l0 = layerTar("d0", { "usr/lib/app": { fixture: "app" }, "etc/readme": { text: "hi\n" } });
    const l1 = layerTar("d1", { "etc/other": { text: "x\n" } });
    const image = dockerSave("docker", [l0, l1]);
    const before = judge(unpack(image));
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "docker-out.tar", image);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const root = unpack("docker-out.tar");
    const after = judge(root);
    expect(after.layers.map((l) => l.path)).toEqual(before.layers.map((l) => l.path));
    expect(after.layers[1]!.blob.equals(before.layers[1]!.blob)).toBe(true);
    expect(member(after.layers[0]!.tar, "usr/lib/app").equals(await single("app", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    const [oldManifest] = JSON.parse(readFileSync(join(dir, "x-docker.tar/manifest.json"), "utf8"));
    const [newManifest] = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8"));
    expect(newManifest.Config).not.toBe(oldManifest.Config);
    expect(newManifest.RepoTags).toEqual(["t:1"]);
    expect(readFileSync(join(root, "repositories")).equals(readFileSync(join(dir, "x-docker.tar/repositories")))).toBe(true);
    expect(existsSync(join(root, oldManifest.Config))).toBe(false);
    if (skopeo) {
      const inspect = spawnSync("skopeo", ["inspect", "--raw", "docker-archive:docker-out.tar"], { cwd: dir });
      expect(inspect.status, inspect.stderr.toString()).toBe(0);
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", "docker-archive:docker-out.tar", "oci:skopeo-docker"], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it("compress then decompress, --dry-run, --in-place; a selection matching nothing writes nothing", async () => {
    const l0 = layerTar("c0", { "usr/lib/libboth.a": { fixture: "libboth.a" } });
    const image = ociLayout("cd", [l0], ["gzip"]);
    const dry = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--dry-run", "--json", image)).stdout);
    const real = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--json", "-o", "cd-pruned.tar", image)).stdout);
    expect(dry.packages[0].format).toBe("image");
    expect(dry.total.outputSize).toBe(real.total.outputSize);
    expect(statSync(join(dir, "cd-pruned.tar")).size).toBe(real.total.outputSize);
    const c = await kit("compress", "-o", "cd-c.tar", image);
    expect([c.code, c.stderr]).toEqual([0, ""]);
    const d = await kit("decompress", "-o", "cd-d.tar", "cd-c.tar");
    expect([d.code, d.stderr]).toEqual([0, ""]);
    const compressed = judge(unpack("cd-c.tar"));
    const decompressed = judge(unpack("cd-d.tar"));
    expect(member(compressed.layers[0]!.tar, "usr/lib/libboth.a").equals(await single("libboth.a", "compress"))).toBe(true);
    expect(member(decompressed.layers[0]!.tar, "usr/lib/libboth.a").equals(await single("libboth.a", "compress") && (await kit("decompress", "-o", "single-d", join(dir, "single-libboth.a-compress")), readFileSync(join(dir, "single-d"))))).toBe(true);
    // Nothing matches: an error, no output.
    const none = await kit("prune", "--keep=gfx1100", "-o", "cd-none.tar", image);
    expect(none.code).not.toBe(0);
    expect(existsSync(join(dir, "cd-none.tar"))).toBe(false);
    // In place: the same bytes as -o.
    copyFileSync(join(dir, image), join(dir, "cd-inplace.tar"));
    const inPlace = await kit("prune", "--keep=gfx90a", "--allow-empty", "--in-place", "cd-inplace.tar");
    expect([inPlace.code, inPlace.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, "cd-inplace.tar")).equals(readFileSync(join(dir, "cd-pruned.tar")))).toBe(true);
  }, HANG_MS);

  it("a layer member left with no device code is an error without --allow-empty, and nothing is written", async () => {
    const l0 = layerTar("e0", { "usr/lib/app": { fixture: "app" } });
    const image = ociLayout("empty", [l0], ["gzip"]);
    const r = await kit("prune", "--drop=gfx906,gfx90a", "-o", "empty-out.tar", image);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/empty\.tar!blobs\/sha256\/[0-9a-f]{64}!usr\/lib\/app.*keeps none of the bundle's device entries/);
    expect(existsSync(join(dir, "empty-out.tar"))).toBe(false);
    const withFlag = await kit("prune", "--drop=gfx906,gfx90a", "--allow-empty", "-o", "empty-out.tar", image);
    expect([withFlag.code, withFlag.stderr]).toEqual([0, ""]);
    judge(unpack("empty-out.tar"));
  }, HANG_MS);

  it("an OCI layout folder: --out-dir writes a new folder (unchanged blobs hard-linked), --in-place rewrites it; both judged, the same blobs", async () => {
    const l0 = layerTar("f0", { "usr/lib/app": { fixture: "app" } });
    const l1 = layerTar("f1", { "etc/readme": { text: "hi\n" } });
    ociLayout("layout", [l0, l1], ["gzip", "gzip"]);
    const before = judge(join(dir, "layout"));
    mkdirSync(join(dir, "mirror"));
    const out = await kit("prune", "--keep=gfx90a", "--allow-empty", "--out-dir", "mirror", "layout");
    expect([out.code, out.stderr]).toEqual([0, ""]);
    const mirrored = judge(join(dir, "mirror/layout"));
    expect(mirrored.layers[1]!.path).toBe(before.layers[1]!.path);
    expect(statSync(join(dir, "mirror/layout", mirrored.layers[1]!.path)).ino).toBe(statSync(join(dir, "layout", before.layers[1]!.path)).ino);
    const app = await single("app", "prune", "--keep=gfx90a", "--allow-empty");
    expect(member(mirrored.layers[0]!.tar, "usr/lib/app").equals(app)).toBe(true);
    // The input folder is as it was.
    expect(judge(join(dir, "layout")).layers[0]!.path).toBe(before.layers[0]!.path);
    const inPlace = await kit("prune", "--keep=gfx90a", "--allow-empty", "--in-place", "layout");
    expect([inPlace.code, inPlace.stderr]).toEqual([0, ""]);
    const after = judge(join(dir, "layout"));
    expect(after.layers.map((l) => l.path)).toEqual(mirrored.layers.map((l) => l.path));
    expect(readdirSync(join(dir, "layout/blobs/sha256")).sort()).toEqual(readdirSync(join(dir, "mirror/layout/blobs/sha256")).sort());
    if (skopeo) {
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", "oci:layout", "dir:skopeo-layout"], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it("docker 25's layout (index.json and manifest.json naming the same blobs): both rewritten, the same layer and config in each", async () => {
    const l0 = layerTar("m0", { "usr/lib/app": { fixture: "app" } });
    const l1 = layerTar("m1", { "etc/readme": { text: "hi\n" } });
    const image = ociLayout("mixed", [l0, l1], ["none", "none"], true);
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "mixed-out.tar", image);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const root = unpack("mixed-out.tar");
    const judged = judge(root);
    // manifest.json's two layers, then index.json's: the same paths.
    expect(judged.layers.map((l) => l.path)).toEqual([...judged.layers.slice(0, 2), ...judged.layers.slice(0, 2)].map((l) => l.path));
    const [docker] = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8"));
    expect(existsSync(join(root, docker.Config))).toBe(true);
    expect(member(judged.layers[0]!.tar, "usr/lib/app").equals(await single("app", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    if (skopeo) {
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", "docker-archive:mixed-out.tar", "dir:skopeo-mixed"], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it("two images sharing a layer (docker save of two tags): the layer rewritten once, both configs' diff_ids follow it", async () => {
    const base = layerTar("s0", { "usr/lib/app": { fixture: "app" } });
    const a = layerTar("s1", { "etc/a": { text: "a\n" } });
    const b = layerTar("s2", { "etc/b": { text: "b\n" } });
    const root = join(dir, "shared");
    mkdirSync(root);
    const idOf = (layer: Buffer) => hex(Buffer.from(`v1 ${hex(layer)}`));
    for (const layer of [base, a, b]) {
      mkdirSync(join(root, idOf(layer)));
      writeFileSync(join(root, idOf(layer), "layer.tar"), layer);
    }
    const images = [[base, a], [base, b]].map((layers, i) => {
      const config = configOf(layers);
      writeFileSync(join(root, `${hex(config)}.json`), config);
      return { Config: `${hex(config)}.json`, RepoTags: [`t:${i}`], Layers: layers.map((l) => `${idOf(l)}/layer.tar`) };
    });
    writeFileSync(join(root, "manifest.json"), JSON.stringify(images));
    execFileSync("tar", ["-c", "-f", "shared.tar", "-C", root, ...readdirSync(root).sort()], { cwd: dir });
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "shared-out.tar", "shared.tar");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/shared\.tar: image package, .* 1 changed, 1 layer, 2 configs, manifest\.json rewritten/);
    const judged = judge(unpack("shared-out.tar"));
    expect(judged.layers).toHaveLength(4);
    expect(judged.layers[0]!.blob.equals(judged.layers[2]!.blob)).toBe(true);
    expect(member(judged.layers[0]!.tar, "usr/lib/app").equals(await single("app", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    const [one, two] = JSON.parse(readFileSync(join(dir, "x-shared-out.tar/manifest.json"), "utf8"));
    expect(one.Config).not.toBe(images[0]!.Config);
    expect(two.Config).not.toBe(images[1]!.Config);
  }, HANG_MS);

  it("an input whose config's diff_id is not its layer's sha256 is refused, naming both, and nothing is written", async () => {
    const l0 = layerTar("h0", { "usr/lib/app": { fixture: "app" } });
    const root = join(dir, "lying");
    mkdirSync(join(root, "layer0"), { recursive: true });
    writeFileSync(join(root, "layer0/layer.tar"), l0);
    const config = configOf([Buffer.from("not the layer")]);
    writeFileSync(join(root, `${hex(config)}.json`), config);
    writeFileSync(join(root, "manifest.json"), JSON.stringify([{ Config: `${hex(config)}.json`, RepoTags: ["t:1"], Layers: ["layer0/layer.tar"] }]));
    execFileSync("tar", ["-c", "-f", "lying.tar", "-C", root, ...readdirSync(root).sort()], { cwd: dir });
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "lying-out.tar", "lying.tar");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`'layer0/layer.tar' decodes to ${digest(l0)}, but '${hex(config)}.json' says diff_ids[0] is ${digest(Buffer.from("not the layer"))}`);
    expect(existsSync(join(dir, "lying-out.tar"))).toBe(false);
  }, HANG_MS);
});

/**
 * The folder `root` packed again into `out` by Python's tarfile in `format` (pax, gnu, ustar), every name
 * behind `lead` (`./` repeated: names past 100 bytes), each pax member also given a `comment` record that
 * the output must keep.
 */
function repack(root: string, out: string, format: "pax" | "gnu" | "ustar", lead: string): void {
  const script = [
    "import os, sys, tarfile",
    "root, out, fmt, lead = sys.argv[1:5]",
    "f = {'pax': tarfile.PAX_FORMAT, 'gnu': tarfile.GNU_FORMAT, 'ustar': tarfile.USTAR_FORMAT}[fmt]",
    "with tarfile.open(out, 'w', format=f) as t:",
    "  for d, dirs, files in os.walk(root):",
    "    dirs.sort()",
    "    for n in sorted(files):",
    "      p = os.path.join(d, n)",
    "      info = t.gettarinfo(p, lead + os.path.relpath(p, root))",
    "      info.uid = info.gid = 0; info.uname = info.gname = ''; info.mtime = 0",
    "      if fmt == 'pax': info.pax_headers = {'comment': 'kept ' + n}",
    "      with open(p, 'rb') as fh: t.addfile(info, fh)",
  ].join("\n");
  execFileSync("python3", ["-c", script, root, out, format, lead], { cwd: dir });
}

/** Python's tarfile reading `tar` (a path or bytes): each member's name, size, pax records and sha256. */
function pythonTar(tar: string | Buffer): { name: string; size: number; pax: Record<string, string>; sha256: string | null }[] {
  const script = [
    "import hashlib, io, json, sys, tarfile",
    "src = sys.argv[1] if len(sys.argv) > 1 else None",
    "t = tarfile.open(src) if src else tarfile.open(fileobj=io.BytesIO(sys.stdin.buffer.read()))",
    "print(json.dumps([{'name': m.name, 'size': m.size, 'pax': m.pax_headers, 'sha256': hashlib.sha256(t.extractfile(m).read()).hexdigest() if m.isfile() else None} for m in t.getmembers()]))",
  ].join("\n");
  return JSON.parse(typeof tar === "string"
    ? execFileSync("python3", ["-c", script, tar], { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28 })
    : execFileSync("python3", ["-c", script], { input: tar, encoding: "utf8", maxBuffer: 1 << 28 }));
}

/** A layer tar written by Python's tarfile (pax): `long` past 100 bytes, its size also in a pax `size` record. */
function paxLayer(long: string, fixture: string): Buffer {
  const script = [
    "import io, sys, tarfile",
    "name, path = sys.argv[1:3]",
    "data = open(path, 'rb').read()",
    "buf = io.BytesIO()",
    "with tarfile.open(fileobj=buf, mode='w', format=tarfile.PAX_FORMAT) as t:",
    "  readme = tarfile.TarInfo('etc/readme'); readme.size = 3; t.addfile(readme, io.BytesIO(b'hi\\n'))",
    "  info = tarfile.TarInfo(name); info.size = len(data); info.mode = 0o755",
    "  info.pax_headers = {'size': str(len(data)), 'comment': 'a record kept byte for byte'}",
    "  t.addfile(info, io.BytesIO(data))",
    "sys.stdout.buffer.write(buf.getvalue())",
  ].join("\n");
  return execFileSync("python3", ["-c", script, long, join(HOSTS, fixture)], { maxBuffer: 1 << 28 });
}

const pythonTools = tools && haveTools("python3");

describe.skipIf(!pythonTools)("pax and long-name records (outer tarball and layers)", () => {
  const LONG = "usr/lib/a/directory/deep/enough/that/the/path/is/longer/than/one/hundred/bytes/of/a/ustar/name/field/libfat.o";

  it.each([
    ["pax", "./"],
    ["gnu", "./".repeat(14)],
    ["ustar", "./".repeat(14)],
  ] as const)("an OCI tarball written by Python's tarfile (%s, names led by %j): renamed blobs keep their records, tar -t, tarfile, skopeo and every digest agree", async (format, lead) => {
    const l0 = paxLayer(LONG, "fat.o");
    const l1 = layerTar(`p1-${format}`, { "etc/other": { text: "x\n" } });
    const name = `records-${format}`;
    ociLayout(name, [l0, l1], ["gzip", "none"]);
    repack(join(dir, name), join(dir, `${name}-in.tar`), format, lead);
    const input = pythonTar(join(dir, `${name}-in.tar`));
    // The names do need the records this test is about.
    if (format !== "pax") expect(input.some((m) => m.name.length > 100)).toBe(true);
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", `${name}-out.tar`, `${name}-in.tar`);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const listing = spawnSync("tar", ["-t", "-f", `${name}-out.tar`], { cwd: dir });
    expect(listing.status, listing.stderr.toString()).toBe(0);
    const output = pythonTar(join(dir, `${name}-out.tar`));
    expect(output.map((m) => m.name).sort()).toEqual(listing.stdout.toString().trim().split("\n").sort());
    expect(output).toHaveLength(input.length);
    for (const m of output) {
      expect(m.name.startsWith(lead)).toBe(true);
      const blob = /blobs\/sha256\/([0-9a-f]{64})$/.exec(m.name);
      if (blob !== null) expect(m.sha256, m.name).toBe(blob[1]);
    }
    // Every other pax record kept: the comments of the input, renamed entries' among them (they name the old blob).
    if (format === "pax") expect(output.map((m) => m.pax.comment).sort()).toEqual(input.map((m) => m.pax.comment).sort());
    const judged = judge(unpack(`${name}-out.tar`));
    expect(judged.layers).toHaveLength(2);
    // The layer's pax records: the size record says the new size, the comment is kept, the long path is kept.
    const layer = pythonTar(judged.layers[0]!.tar).find((m) => m.name === LONG)!;
    const fat = await single("fat.o", "prune", "--keep=gfx90a", "--allow-empty");
    expect(layer.sha256).toBe(hex(fat));
    expect(layer.pax).toMatchObject({ size: String(fat.length), comment: "a record kept byte for byte", path: LONG });
    expect(execFileSync("tar", ["-x", "-O", LONG], { input: judged.layers[0]!.tar, maxBuffer: 1 << 28 }).equals(fat)).toBe(true);
    if (skopeo) {
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", `oci-archive:${name}-out.tar`, `dir:skopeo-${name}`], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it("docker save packed by GNU tar --format=pax (a pax header before every entry): written, judged, read by skopeo", async () => {
    const l0 = layerTar("gp0", { "usr/lib/app": { fixture: "app" } });
    const l1 = layerTar("gp1", { "etc/other": { text: "x\n" } });
    dockerSave("gnupax", [l0, l1]);
    const root = join(dir, "gnupax");
    execFileSync("tar", ["--format=pax", "-c", "-f", "gnupax-in.tar", "-C", root, ...readdirSync(root).sort()], { cwd: dir });
    expect(pythonTar(join(dir, "gnupax-in.tar")).every((m) => "mtime" in m.pax)).toBe(true);
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "gnupax-out.tar", "gnupax-in.tar");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const output = pythonTar(join(dir, "gnupax-out.tar"));
    // Every entry kept its pax records (mtime, atime, ctime as GNU tar wrote them).
    expect(output.every((m) => "mtime" in m.pax && "atime" in m.pax)).toBe(true);
    const judged = judge(unpack("gnupax-out.tar"));
    expect(member(judged.layers[0]!.tar, "usr/lib/app").equals(await single("app", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    if (skopeo) {
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", "docker-archive:gnupax-out.tar", "dir:skopeo-gnupax"], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);
});

describe.skipIf(!tools)("a blob whose bytes are not its name", () => {
  it("is refused when it would be rewritten (IMAGE_BAD_DIGEST, naming both digests), and nothing is written", async () => {
    const l0 = layerTar("n0", { "usr/lib/app": { fixture: "app" } });
    ociLayout("misnamed", [l0], ["gzip"]);
    const root = join(dir, "misnamed");
    const index = JSON.parse(readFileSync(join(root, "index.json"), "utf8"));
    const nested = JSON.parse(readFileSync(join(root, blobPath(index.manifests[0].digest)), "utf8"));
    const manifestPath = join(root, blobPath(nested.manifests[0].digest));
    // The manifest's bytes change (a space more), its name does not: found by the fuzz target image-writer.
    writeFileSync(manifestPath, `${readFileSync(manifestPath, "utf8")} `);
    execFileSync("tar", ["-c", "-f", "misnamed.tar", "-C", root, "oci-layout", "index.json", "blobs"], { cwd: dir });
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "misnamed-out.tar", "misnamed.tar");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`'${blobPath(nested.manifests[0].digest)}' is named by ${nested.manifests[0].digest}, but its bytes' sha256 is sha256:${hex(readFileSync(manifestPath))}`);
    expect(existsSync(join(dir, "misnamed-out.tar"))).toBe(false);
  }, HANG_MS);
});

describe.skipIf(!tools)("an image tarball with a GNU base-256 size field", () => {
  it("is recognised as an image (not refused by the tarball writer) and written, its layer judged", async () => {
    const l0 = layerTar("b0", { "usr/lib/app": { fixture: "app" } });
    dockerSave("base256", [l0]);
    const root = join(dir, "base256");
    // The layer's size in base-256, as GNU tar and Go write sizes of 8 GiB and more.
    const base256 = (n: number) => Uint8Array.from({ length: 12 }, (_, i) => (i === 0 ? 0x80 : Math.floor(n / 256 ** (11 - i)) % 256));
    const entries = readdirSync(root).sort().flatMap((name) => {
      const full = join(root, name);
      if (!statSync(full).isDirectory()) return [tarEntry(name, readFileSync(full))];
      return readdirSync(full).sort().map((inner) => {
        const body = readFileSync(join(full, inner));
        return tarEntry(`${name}/${inner}`, body, inner === "layer.tar" ? { rawSize: base256(body.length) } : {});
      });
    });
    writeFileSync(join(dir, "base256.tar"), tarOf(entries));
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", "base256-out.tar", "base256.tar");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const judged = judge(unpack("base256-out.tar"));
    expect(member(judged.layers[0]!.tar, "usr/lib/app").equals(await single("app", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
  }, HANG_MS);
});

describe.skipIf(!tools || !haveTools("xz"))("compressed image tarballs (docker save | gzip, and zstd, xz)", () => {
  it.each([
    ["gzip -n", "gz", 0],
    ["gzip -9 -n", "gz", 2],
  ] as const)("docker save | %s (.tar.%s): written gzipped at the level its header suggests (XFL %d), judged decoded, read by skopeo", async (command, ext, xfl) => {
    const l0 = layerTar(`z0-${xfl}`, { "usr/lib/app": { fixture: "app" }, "etc/readme": { text: "hi\n" } });
    const l1 = layerTar(`z1-${xfl}`, { "etc/other": { text: "x\n" } });
    const plain = dockerSave(`zipped-${xfl}`, [l0, l1]);
    const [program, ...args] = command.split(" ");
    const input = `zipped-${xfl}.tar.${ext}`;
    writeFileSync(join(dir, input), execFileSync(program!, ["-c", ...args], { input: readFileSync(join(dir, plain)), maxBuffer: 1 << 30 }));
    const dry = JSON.parse((await kit("prune", "--keep=gfx90a", "--allow-empty", "--dry-run", "--json", input)).stdout);
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", `out-${input}`, input);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(new RegExp(`^${input.replace(/\./g, "\\.")}: image package, .*1 layer, 1 config, manifest\\.json rewritten`, "m"));
    const written = readFileSync(join(dir, `out-${input}`));
    expect(dry.total.outputSize).toBe(written.length);
    expect([written[0], written[1], written[8]]).toEqual([0x1f, 0x8b, xfl]);
    const gunzipped = `out-zipped-${xfl}.tar`;
    writeFileSync(join(dir, gunzipped), gunzipSync(written));
    const judged = judge(unpack(gunzipped));
    expect(member(judged.layers[0]!.tar, "usr/lib/app").equals(await single("app", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    expect(judged.layers[1]!.blob.equals(l1)).toBe(true);
    // The report names members inside the gzipped output.
    expect(r.stdout).toContain(`-> out-${input}!`);
    if (skopeo) {
      // skopeo 1.9.3's docker-archive: transport does not read a gzipped docker save (the input neither: "loading
      // tar component manifest.json: unexpected EOF"), so it reads the output gunzipped.
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", `docker-archive:${gunzipped}`, `oci:skopeo-zipped-${xfl}`], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it.each([["zstd", "zst", 0xfd2fb528], ["xz", "xz", 0x587a37fd]] as const)("an OCI tarball compressed with %s: written with it again, judged decoded, read by skopeo", async (program, ext, magic) => {
    const l0 = layerTar(`y0-${ext}`, { "usr/lib/libboth.a": { fixture: "libboth.a" } });
    const plain = ociLayout(`squeezed-${ext}`, [l0], ["gzip"]);
    const input = `squeezed.tar.${ext}`;
    writeFileSync(join(dir, input), execFileSync(program, ["-c", "-q"], { input: readFileSync(join(dir, plain)), maxBuffer: 1 << 30 }));
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "-o", `out-${input}`, input);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const written = readFileSync(join(dir, `out-${input}`));
    expect(written.readUInt32LE(0)).toBe(magic);
    const decoded = `out-squeezed-${ext}.tar`;
    writeFileSync(join(dir, decoded), execFileSync(program, ["-d", "-c", "-q"], { input: written, maxBuffer: 1 << 30 }));
    const judged = judge(unpack(decoded));
    expect(member(judged.layers[0]!.tar, "usr/lib/libboth.a").equals(await single("libboth.a", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
    if (skopeo) {
      const copy = spawnSync("skopeo", ["--insecure-policy", "copy", `oci-archive:${decoded}`, `dir:skopeo-squeezed-${ext}`], { cwd: dir });
      expect(copy.status, copy.stderr.toString()).toBe(0);
    }
  }, HANG_MS);

  it("a gzipped image with nothing to edit is written as it was; a gzipped tarball that only looks like an image stays a tarball", async () => {
    const l0 = layerTar("w0", { "etc/readme": { text: "hi\n" } });
    const plain = dockerSave("nothing", [l0]);
    writeFileSync(join(dir, "nothing.tar.gz"), gzipSync(readFileSync(join(dir, plain))));
    const same = await kit("decompress", "-o", "out-nothing.tar.gz", "nothing.tar.gz");
    expect([same.code, same.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, "out-nothing.tar.gz")).equals(readFileSync(join(dir, "nothing.tar.gz")))).toBe(true);
    // A blob-like path but no manifest.json or index.json: the tarball writer edits it as any tarball.
    const root = join(dir, "lookalike");
    mkdirSync(join(root, "blobs/sha256"), { recursive: true });
    copyFileSync(join(HOSTS, "fat.o"), join(root, "blobs/sha256", "a".repeat(64)));
    execFileSync("tar", ["-c", "-z", "-f", "lookalike.tar.gz", "-C", root, "blobs"], { cwd: dir });
    const r = await kit("prune", "--keep=gfx90a", "--allow-empty", "--json", "-o", "out-lookalike.tar.gz", "lookalike.tar.gz");
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).packages[0].format).toBe("tarball");
    const fat = execFileSync("tar", ["-x", "-z", "-O", "-f", "out-lookalike.tar.gz", `blobs/sha256/${"a".repeat(64)}`], { cwd: dir, maxBuffer: 1 << 28 });
    expect(fat.equals(await single("fat.o", "prune", "--keep=gfx90a", "--allow-empty"))).toBe(true);
  }, HANG_MS);
});

describe.skipIf(!tools)("--copy with an OCI layout folder", () => {
  it("--out-dir --copy writes every unchanged blob as a copy of its own (one link, same bytes and mode); without it they are the input's files", async () => {
    const l0 = layerTar("k0", { "usr/lib/app": { fixture: "app" } });
    const l1 = layerTar("k1", { "etc/readme": { text: "hi\n" } });
    ociLayout("copied", [l0, l1], ["gzip", "gzip"]);
    const before = judge(join(dir, "copied"));
    const untouched = join(dir, "copied", before.layers[1]!.path);
    for (const [folder, flags] of [["with-copy", ["--copy"]], ["with-links", []]] as const) {
      mkdirSync(join(dir, folder));
      const r = await kit("prune", "--keep=gfx90a", "--allow-empty", ...flags, "--out-dir", folder, "copied");
      expect([r.code, r.stderr]).toEqual([0, ""]);
      const after = judge(join(dir, folder, "copied"));
      expect(after.layers[1]!.path).toBe(before.layers[1]!.path);
      const kept = statSync(join(dir, folder, "copied", after.layers[1]!.path));
      expect(readFileSync(join(dir, folder, "copied", after.layers[1]!.path)).equals(readFileSync(untouched))).toBe(true);
      expect(kept.mode).toBe(statSync(untouched).mode);
      if (flags.length > 0) {
        // Every file in the mirror is its own: none shares an inode with the input folder.
        const inputInodes = new Set(readdirSync(join(dir, "copied/blobs/sha256")).map((f) => statSync(join(dir, "copied/blobs/sha256", f)).ino));
        for (const f of readdirSync(join(dir, folder, "copied/blobs/sha256"))) expect(statSync(join(dir, folder, "copied/blobs/sha256", f)).nlink, f).toBe(1);
        for (const f of readdirSync(join(dir, folder, "copied/blobs/sha256"))) expect(inputInodes.has(statSync(join(dir, folder, "copied/blobs/sha256", f)).ino), f).toBe(false);
        expect(statSync(join(dir, folder, "copied/oci-layout")).ino).not.toBe(statSync(join(dir, "copied/oci-layout")).ino);
      } else {
        expect(kept.ino).toBe(statSync(untouched).ino);
        expect(statSync(join(dir, folder, "copied/oci-layout")).ino).toBe(statSync(join(dir, "copied/oci-layout")).ino);
      }
    }
    // --copy still goes with --out-dir only.
    const refused = await kit("prune", "--keep=gfx90a", "--copy", "-o", "copied-out", "copied");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("--copy goes with --out-dir");
  }, HANG_MS);
});
