/**
 * Files for `offload-kit prune`, `compress` and `decompress` (the only file of src/prune/ that uses node:*):
 * where each output goes (`-o OUT` for one input, `--out-dir=DIR` for `DIR/<file name>`, `--in-place`),
 * and writing them all or none. Every output goes to a temporary file beside its destination and is
 * renamed over it only when every input has been edited (src/node/output.ts `withOutputs`), so a failure
 * leaves every input and destination byte-identical. Outputs take the input's permission bits (an
 * executable library stays executable; `--in-place` keeps the file's mode). `--dry-run` edits in memory
 * and writes nothing.
 */
import { chmodSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { OffloadKitError } from "../engine/errors.js";
import { fileError } from "../node/errors.js";
import { withOutputs } from "../node/output.js";
import type { EditResult } from "./index.js";

export type Destination =
  | { readonly kind: "output"; readonly path: string }
  | { readonly kind: "out-dir"; readonly dir: string }
  | { readonly kind: "in-place" }
  | { readonly kind: "dry-run" };

export interface FileEdit<R extends EditResult> {
  readonly input: string;
  /** undefined for --dry-run. */
  readonly output: string | undefined;
  readonly result?: R;
  /** Set only in dry runs, where every file is tried; a real run stops at the first failure. */
  readonly error?: OffloadKitError;
}

/** Where each input's output goes; errors (two inputs for -o, a missing folder, a clash) before anything is read. */
export function destinations(inputs: readonly string[], destination: Destination): (string | undefined)[] {
  switch (destination.kind) {
    case "dry-run":
      return inputs.map(() => undefined);
    case "in-place":
      return [...inputs];
    case "output":
      if (inputs.length !== 1) {
        throw new OffloadKitError("BAD_OPTIONS", `-o names one output, but ${inputs.length} inputs were given (use --out-dir or --in-place)`, { field: "-o" });
      }
      return [destination.path];
    case "out-dir": {
      let stat;
      try {
        stat = statSync(destination.dir);
      } catch (e) {
        throw fileError(destination.dir, e);
      }
      if (!stat.isDirectory()) throw new OffloadKitError("ENOTDIR", `'${destination.dir}': not a directory`, { field: "--out-dir" });
      const outputs = inputs.map((input) => join(destination.dir, basename(input)));
      const seen = new Map<string, string>();
      outputs.forEach((output, i) => {
        const key = resolve(output);
        const other = seen.get(key);
        if (other !== undefined) {
          throw new OffloadKitError("OUTPUT_CLASH", `'${other}' and '${inputs[i]}' would both be written to '${output}'`, { field: "--out-dir" });
        }
        if (key === resolve(inputs[i])) {
          throw new OffloadKitError("OUTPUT_IS_INPUT", `'${output}' is the input itself (use --in-place to replace it)`, { field: "--out-dir" });
        }
        seen.set(key, inputs[i]);
      });
      return outputs;
    }
  }
}

function readInput(path: string): { bytes: Uint8Array; mode: number } {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new OffloadKitError("NOT_A_FILE", `'${path}': not a regular file`);
    return { bytes: readFileSync(path), mode: stat.mode & 0o7777 };
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    throw fileError(path, e);
  }
}

function withName(path: string, e: unknown): unknown {
  return e instanceof OffloadKitError && !e.message.startsWith(path) ? new OffloadKitError(e.code, `${path}: ${e.message}`, { offset: e.offset, field: e.field, cause: e }) : e;
}

/**
 * Edits every input with `edit` and writes the outputs all or none. In a dry run every input is tried
 * and failures are reported per file; otherwise the first failure throws and nothing is written.
 */
export function editFiles<R extends EditResult>(
  inputs: readonly string[],
  destination: Destination,
  edit: (bytes: Uint8Array, name: string) => R,
  /** Runs after every input is edited and before anything is renamed into place; throwing discards every output. */
  check?: (edits: readonly FileEdit<R>[]) => void,
): FileEdit<R>[] {
  const outputs = destinations(inputs, destination);
  if (destination.kind === "dry-run") {
    const edits = inputs.map((input): FileEdit<R> => {
      try {
        return { input, output: undefined, result: edit(readInput(input).bytes, input) };
      } catch (e) {
        const error = withName(input, e);
        if (error instanceof OffloadKitError) return { input, output: undefined, error };
        throw error;
      }
    });
    check?.(edits.filter((e) => e.error === undefined));
    return edits;
  }
  return withOutputs((open) => {
    const edits = inputs.map((input, i): FileEdit<R> => {
    const output = outputs[i]!;
    const { bytes, mode } = readInput(input);
    let result: R;
    try {
      result = edit(bytes, input);
    } catch (e) {
      throw withName(input, e);
    }
    // In place and unchanged: nothing to write, the file is already the output.
    if (destination.kind === "in-place" && !result.changed) return { input, output, result };
    const file = open(output);
    file.write(result.output);
    file.close();
    if (file.tempPath !== undefined) {
      try {
        chmodSync(file.tempPath, mode);
      } catch (e) {
        throw fileError(output, e);
      }
    }
    return { input, output, result };
    });
    check?.(edits);
    return edits;
  });
}
