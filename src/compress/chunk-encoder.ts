/** A synchronous streaming compressor: each call returns the compressed bytes ready so far (possibly none). */
export interface ChunkEncoder { push(bytes: Uint8Array): Uint8Array[]; finish(): Uint8Array[]; }
