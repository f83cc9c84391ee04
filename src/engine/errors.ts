/**
 * The one error class the library throws for bad input or bad usage. It carries a stable `code`, and
 * for format errors the byte `offset` of the offending field and the field's name, so a caller can
 * point at the exact bytes. Messages are worded like LLVM's where LLVM has a message for the case.
 */
export class OffloadKitError extends Error {
  override readonly name = "OffloadKitError";
  readonly code: string;
  readonly offset: number | undefined;
  readonly field: string | undefined;

  constructor(code: string, message: string, details: { offset?: number; field?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.offset = details.offset;
    this.field = details.field;
  }
}

export function isOffloadKitError(value: unknown): value is OffloadKitError {
  return value instanceof OffloadKitError;
}
