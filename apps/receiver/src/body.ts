import type { IncomingMessage } from 'node:http';
import { InvalidPayloadError, PayloadTooLargeError } from '@webhook-inbox/inbox/errors';

/**
 * The raw request body, with the limit enforced while reading: a declared Content-Length over the limit is
 * refused before a byte is read, and a body that grows past it (chunked, or lying) is refused at the first
 * chunk that crosses it, so at most `limit` bytes plus one socket chunk are ever held.
 *
 * Reads straight from Node's `IncomingMessage` when served by @hono/node-server (no web-stream layer on the
 * hot path); `app.request()` in tests goes through the standard `Request` body instead.
 */
export async function readRawBody(
  request: Request,
  incoming: IncomingMessage | undefined,
  limit: number,
): Promise<Uint8Array> {
  const declared = incoming ? incoming.headers['content-length'] : request.headers.get('content-length');
  if (declared !== undefined && declared !== null && Number(declared) > limit) {
    throw new PayloadTooLargeError(limit);
  }
  if (incoming) return readNodeStream(incoming, limit);
  if (!request.body) return new Uint8Array(0);
  return readWebStream(request.body, limit);
}

function readNodeStream(incoming: IncomingMessage, limit: number): Promise<Uint8Array> {
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        // The rest is read and thrown away (never held) while the 413 goes out, then the connection is closed:
        // @hono/node-server drains for at most 500 ms / 64 MiB. Closing at once instead would make the sender's
        // next write fail (EPIPE/RST) before it had read our answer.
        incoming.resume();
        reject(new PayloadTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(
        new InvalidPayloadError('the request body could not be read (connection cut off?)', { cause: error }),
      );
    };
    const onClose = () => {
      if (incoming.readableEnded) return;
      onError(new Error('connection closed before the body was complete'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

async function readWebStream(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
