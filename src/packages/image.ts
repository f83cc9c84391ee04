/**
 * Container images: `docker save` tarballs (manifest.json, Docker Image Specification v1.2) and OCI image
 * layout tarballs (oci-layout, index.json, blobs/<alg>/<hex>; OCI image-spec v1.1), and how their layers
 * stack.
 *
 * Layers are applied bottom to top; the walker reads them top to bottom instead, so each layer is decoded
 * once and a file is reported only if nothing above covers it: the same path in an upper layer, a
 * whiteout `.wh.<name>` of it or of a directory above it, or an opaque marker `.wh..wh..opq` in an upper
 * layer's directory above it (image-spec layer.md, "Whiteouts"). A whiteout that hides nothing below is
 * legal but suspicious, and is reported.
 */
import { OffloadKitError } from "../engine/errors.js";

export interface ImageManifest {
  /** A name for the image: its first repo tag, or the manifest's digest. */
  readonly name: string;
  /** Paths of the layer blobs inside the image tarball, bottom first. */
  readonly layers: readonly string[];
}

const WHITEOUT_PREFIX = ".wh.";
const OPAQUE = ".wh..wh..opq";

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null) throw new OffloadKitError("IMAGE_BAD_MANIFEST", `${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function blobPath(digest: unknown): string {
  if (typeof digest !== "string" || !/^[a-z0-9]+:[a-zA-Z0-9=_-]+$/.test(digest)) throw new OffloadKitError("IMAGE_BAD_MANIFEST", `bad digest ${JSON.stringify(digest)}`);
  const colon = digest.indexOf(":");
  return `blobs/${digest.slice(0, colon)}/${digest.slice(colon + 1)}`;
}

/** The images a `docker save` manifest.json lists. */
export function dockerManifests(json: unknown): ImageManifest[] {
  if (!Array.isArray(json)) throw new OffloadKitError("IMAGE_BAD_MANIFEST", "manifest.json is not a list");
  return json.map((entry, i) => {
    const o = asObject(entry, `manifest.json entry ${i}`);
    const layers = o.Layers;
    if (!Array.isArray(layers) || !layers.every((l) => typeof l === "string")) throw new OffloadKitError("IMAGE_BAD_MANIFEST", `manifest.json entry ${i} has no Layers list`);
    const tags = Array.isArray(o.RepoTags) ? o.RepoTags.filter((t) => typeof t === "string") : [];
    return { name: (tags[0] as string | undefined) ?? `image-${i}`, layers: layers as string[] };
  });
}

/** The images an OCI index lists, following nested indexes (`readBlob` gives a blob's JSON by path). */
export function ociManifests(index: unknown, readBlob: (path: string) => unknown, depth = 0): ImageManifest[] {
  if (depth > 4) throw new OffloadKitError("IMAGE_BAD_MANIFEST", "OCI indexes nest more than 4 deep");
  const manifests = asObject(index, "index.json").manifests;
  if (!Array.isArray(manifests)) throw new OffloadKitError("IMAGE_BAD_MANIFEST", "OCI index has no manifests list");
  const out: ImageManifest[] = [];
  for (const descriptor of manifests) {
    const d = asObject(descriptor, "OCI descriptor");
    const blob = asObject(readBlob(blobPath(d.digest)), `blob ${String(d.digest)}`);
    if (Array.isArray(blob.manifests)) {
      out.push(...ociManifests(blob, readBlob, depth + 1));
      continue;
    }
    if (!Array.isArray(blob.layers)) continue;
    const annotations = typeof d.annotations === "object" && d.annotations !== null ? (d.annotations as Record<string, unknown>) : {};
    const ref = annotations["org.opencontainers.image.ref.name"] ?? annotations["io.containerd.image.name"];
    out.push({
      name: typeof ref === "string" ? ref : String(d.digest),
      layers: blob.layers.map((l: unknown) => blobPath(asObject(l, "layer descriptor").digest)),
    });
  }
  return out;
}

/** A path as a layer records it, without `./` or `/` in front and without a trailing `/`. */
export function layerPath(name: string): string {
  let path = name;
  while (path.startsWith("./") || path.startsWith("/")) path = path.startsWith("./") ? path.slice(2) : path.slice(1);
  while (path.endsWith("/")) path = path.slice(0, -1);
  return path;
}

interface Whiteout {
  readonly layer: number;
  readonly offset: number;
  used: boolean;
}

/** The union of layers seen from the top: what upper layers have covered so far. */
export class LayerStack {
  /** Paths present in an upper layer, with the highest layer that has them. */
  private readonly present = new Map<string, number>();
  private readonly whiteouts = new Map<string, Whiteout>();
  private readonly opaque = new Map<string, number>();

  /**
   * Records an entry of `layer` (layers are offered from the top down). Returns whether the entry is
   * visible in the final filesystem; a whiteout entry itself returns false.
   */
  offer(name: string, layer: number, offset: number, directory: boolean): boolean {
    const path = layerPath(name);
    if (path === "") return false;
    const slash = path.lastIndexOf("/");
    const dir = slash < 0 ? "" : path.slice(0, slash);
    const base = path.slice(slash + 1);
    if (base === OPAQUE) {
      if (!this.opaque.has(dir)) this.opaque.set(dir, layer);
      return false;
    }
    if (base.startsWith(WHITEOUT_PREFIX)) {
      const target = (dir === "" ? "" : `${dir}/`) + base.slice(WHITEOUT_PREFIX.length);
      if (!this.hiddenBy(target, layer) && !this.whiteouts.has(target)) this.whiteouts.set(target, { layer, offset, used: false });
      return false;
    }
    if (this.hiddenBy(path, layer)) return false;
    const upper = this.present.get(path);
    if (upper !== undefined && upper > layer && !directory) return false;
    if (upper === undefined) this.present.set(path, layer);
    return true;
  }

  /** Whether a whiteout (of it or a directory above it) or an opaque directory above it, in a layer above `layer`, covers `path`. */
  private hiddenBy(path: string, layer: number): boolean {
    const own = this.whiteouts.get(path);
    if (own !== undefined && own.layer > layer) {
      own.used = true;
      return true;
    }
    let at = path;
    while (at !== "") {
      const slash = at.lastIndexOf("/");
      at = slash < 0 ? "" : at.slice(0, slash);
      const opaque = this.opaque.get(at);
      if (opaque !== undefined && opaque > layer) return true;
      const w = at === "" ? undefined : this.whiteouts.get(at);
      if (w !== undefined && w.layer > layer) {
        w.used = true;
        return true;
      }
    }
    return false;
  }

  /** Whiteouts that hid nothing below them (a path that never existed). */
  unused(): { readonly path: string; readonly layer: number; readonly offset: number }[] {
    return [...this.whiteouts].filter(([, w]) => !w.used).map(([path, w]) => ({ path, layer: w.layer, offset: w.offset }));
  }
}
