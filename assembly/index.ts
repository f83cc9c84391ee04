/**
 * The Wasm ABI: only these functions are exported. Every argument and result is a number; inputs and
 * outputs live in the regions described in layout.ts.
 */
import { ABI_VERSION } from "./layout";

export { reserveWindow, getWindowCapacity } from "./layout";
export { scan } from "./scan";
export { bundleHead, walkBundle } from "./bundle";
export { walkOffloadBinaries } from "./offload-binary";
export { archiveHead, walkArchive } from "./ar";

export function abiVersion(): u32 {
  return ABI_VERSION;
}
