/**
 * Copying byte ranges from a source to an output through the engine window: read into engine memory,
 * write straight from it. The window is the only buffer, whatever the range size.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { readInto } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { claimWindow, loadedWindow } from "../engine/window.js";
import type { OutputFile } from "./output.js";

export function copyRange(engine: Engine, source: ByteSource, position: number, length: number, out: OutputFile): void {
  if (length === 0) return;
  if (source.bytes !== undefined) {
    out.write(source.bytes.subarray(position, position + length));
    return;
  }
  // Bytes the last header or marker read already brought into the window need no second read.
  const loaded = loadedWindow(engine);
  if (loaded !== undefined && loaded.source === source && loaded.holds(position, length)) {
    out.write(loaded.view(position, length));
    return;
  }
  // A buffered output with room: read straight into its buffer.
  const room = out.reserve(length);
  if (room !== undefined) {
    readInto(source, room, position);
    out.advance(length);
    return;
  }
  const capacity = engine.windowCapacity;
  let done = 0;
  const window = claimWindow(engine);
  while (done < length) {
    const want = Math.min(capacity, length - done);
    const n = source.read(window.subarray(0, want), position + done);
    if (n <= 0) {
      throw new OffloadKitError("SHORT_READ", `the input ended early at offset ${position + done}`, { offset: position + done });
    }
    out.write(window.subarray(0, n));
    done += n;
  }
}

