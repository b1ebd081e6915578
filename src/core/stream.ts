// Reading a WHATWG ReadableStream (a fetch body, a request body) to its end within a byte limit, never trusting a
// declared length: the first chunk past the limit cancels the stream.

/**
 * The stream's bytes, at most `maxBytes` of them; past that the stream is cancelled and `tooLarge()` is thrown.
 * An absent stream is empty. A single chunk is returned as it is (no copy).
 */
export async function readStreamWithin(
  stream: ReadableStream<Uint8Array> | null | undefined,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
