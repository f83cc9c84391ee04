/**
 * The shape every streaming encoder here has (src/compress/xz-encode.ts, src/compress/bzip2-encode.ts):
 * the caller feeds chunks of any size (a writer feeds 1 MiB pieces of a tar that may be gigabytes) and
 * gets back whatever compressed bytes are ready, so memory stays bounded by the encoder's own window.
 */
export interface ChunkEncoder {
  /** Takes the next input bytes (not kept after the call returns); returns the compressed bytes now ready, possibly none. */
  push(bytes: Uint8Array): Uint8Array[];
  /** Ends the stream; returns the last compressed bytes. The encoder takes no more input after this. */
  finish(): Uint8Array[];
}
