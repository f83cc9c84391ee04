/**
 * Saving what the page makes: one entry, a zip of many (src/inspector/zip.ts) and the report JSON. Where
 * the browser can write a file as it goes (showSaveFilePicker), the zip streams into it; elsewhere it is
 * one Blob assembled from parts, whose file parts are slices of the chosen file (references, not copies),
 * so its memory is the headers and the entries the worker had to decode.
 */
import { BlobPartsSink, writeZip } from "./zip.js";
import type { ZipEntrySource, ZipProgress, ZipSink } from "./zip.js";
import { element } from "./dom.js";

/** Hands `blob` to the browser's downloads under `name`. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = element("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

interface WritableFile {
  write(data: Blob | Uint8Array<ArrayBuffer>): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

type SavePicker = (options: { suggestedName: string; types?: { description: string; accept: Record<string, string[]> }[] }) => Promise<{ createWritable(): Promise<WritableFile> }>;

/** Writes a zip of `entries` to a file the user picks (streamed), else downloads it as one Blob. */
export async function saveZip(name: string, entries: AsyncIterable<ZipEntrySource>, onProgress: (p: ZipProgress) => void): Promise<"file" | "download" | "cancelled"> {
  const picker = (window as unknown as { showSaveFilePicker?: SavePicker }).showSaveFilePicker;
  if (picker !== undefined) {
    let writable: WritableFile;
    try {
      const handle = await picker({ suggestedName: name, types: [{ description: "Zip archive", accept: { "application/zip": [".zip"] } }] });
      writable = await handle.createWritable();
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") return "cancelled";
      throw e;
    }
    const sink: ZipSink = { write: (part) => writable.write(part) };
    try {
      await writeZip(entries, sink, onProgress);
      await writable.close();
    } catch (e) {
      await writable.abort().catch(() => {});
      throw e;
    }
    return "file";
  }
  const sink = new BlobPartsSink();
  await writeZip(entries, sink, onProgress);
  saveBlob(sink.blob(), name);
  return "download";
}
