/** What the campaign knows about one parser: how to make valid inputs, how to run it, what must hold. */
import type { Engine } from "../../../src/engine/engine.js";
import type { ByteSource } from "../../../src/engine/source.js";
import type { Rand } from "./rand.js";
import type { Dictionary, Sample } from "./sample.js";

export interface RunContext {
  readonly engine: Engine;
  /**
   * Wrap inputs in a source that has no `bytes` and answers every read with at most a few bytes, so the
   * positioned-read paths (files, archive members) are exercised and compared with the in-memory ones.
   */
  readonly chunked: boolean;
}

export interface FuzzTarget {
  readonly name: string;
  /** The parser(s) exercised, for the report. */
  readonly about: string;
  /** Run on both engines and require identical outcomes (the parser goes through the engine kernels). */
  readonly engines: boolean;
  /** Also run through a chunked source and require the same outcome. */
  readonly sources: boolean;
  readonly magic?: Uint8Array;
  readonly dictionary?: Dictionary;
  /** Once per worker before the first case (codecs, seed files). */
  setup?(): Promise<void>;
  generate(r: Rand): Sample;
  /** Parses `input`; returns a JSON-comparable description. OffloadKitError is the only error allowed out. */
  run(input: Uint8Array, ctx: RunContext): unknown;
  /**
   * For an input `run` accepted: write what was parsed and parse it again; returns a complaint when the
   * two disagree (`parse(write(x))` must round-trip), else undefined.
   */
  roundTrip?(input: Uint8Array, ctx: RunContext): string | undefined | Promise<string | undefined>;
  /** The largest single buffer an input of this length may cause (default: a few times the input). */
  allocBudget?(inputLength: number): number;
}

/** A source that yields at most `step` bytes per read and no `bytes` (see RunContext.chunked). */
export function chunkedSource(bytes: Uint8Array, step = 7): ByteSource {
  return {
    size: bytes.length,
    read(dest, position) {
      const n = Math.max(0, Math.min(dest.length, step, bytes.length - position));
      dest.set(bytes.subarray(position, position + n));
      return n;
    },
  };
}
