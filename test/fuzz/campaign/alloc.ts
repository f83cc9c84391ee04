/**
 * Allocation watch: the rule is that no buffer is sized from an untrusted field before the field has been
 * checked against the input. While a case runs, every typed-array, ArrayBuffer and Buffer allocation and
 * every WebAssembly memory growth (libzstd's heap grows through `Memory.prototype.grow`) is measured, and
 * the largest one is compared with the parser's budget for an input of that size.
 */
let installed = false;
let watching = false;
let largest = 0;

function note(bytes: number): void {
  if (watching && bytes > largest) largest = bytes;
}

const TYPED = [
  "Uint8Array", "Int8Array", "Uint8ClampedArray", "Uint16Array", "Int16Array", "Uint32Array", "Int32Array",
  "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
] as const;

export function installAllocationWatch(): void {
  if (installed) return;
  installed = true;
  const g = globalThis as unknown as Record<string, unknown>;
  for (const name of TYPED) {
    const original = g[name] as { BYTES_PER_ELEMENT: number } & (new (...args: unknown[]) => unknown);
    g[name] = new Proxy(original, {
      construct(target, args, newTarget) {
        if (typeof args[0] === "number") note(args[0] * original.BYTES_PER_ELEMENT);
        return Reflect.construct(target, args, newTarget);
      },
    });
  }
  const arrayBuffer = g.ArrayBuffer as new (...args: unknown[]) => unknown;
  g.ArrayBuffer = new Proxy(arrayBuffer, {
    construct(target, args, newTarget) {
      if (typeof args[0] === "number") note(args[0]);
      return Reflect.construct(target, args, newTarget);
    },
  });
  for (const name of ["alloc", "allocUnsafe", "allocUnsafeSlow"] as const) {
    const original = Buffer[name] as (size: number, ...rest: unknown[]) => Buffer;
    (Buffer as unknown as Record<string, unknown>)[name] = (size: number, ...rest: unknown[]) => {
      note(size);
      return original.call(Buffer, size, ...rest);
    };
  }
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function (this: WebAssembly.Memory, delta: number): number {
    note(delta * 65536);
    return grow.call(this, delta);
  };
}

export function watchAllocations<T>(run: () => T): { value: T; largest: number } {
  watching = true;
  largest = 0;
  try {
    return { value: run(), largest };
  } finally {
    watching = false;
  }
}

export function beginWatch(): void {
  watching = true;
  largest = 0;
}

export function endWatch(): number {
  watching = false;
  return largest;
}

/** Runs `run` with the watch off (a target's own reference computation is not the parser's allocation). */
export function unwatched<T>(run: () => T): T {
  const was = watching;
  watching = false;
  try {
    return run();
  } finally {
    watching = was;
  }
}
