import type { IncomingMessage } from 'node:http';
import {
  BodyTimeoutError,
  InvalidPayloadError,
  PayloadTooLargeError,
  UnavailableError,
} from '@webhook-inbox/inbox/errors';
import type { BodyLease } from './body-budget.ts';

interface ReadBodyOptions {
  /** Largest body accepted (413 above it). */
  limit: number;
  /** This request's share of the receiver-wide body budget (503 when it cannot make room). */
  lease: BodyLease;
  /** Deadline for the whole body, from the first read (408 past it). Node streams only. */
  timeoutMs: number;
}

/** Too many bodies are being received at once: the budget is full. */
class BodyBudgetFullError extends UnavailableError {
  constructor() {
    super('too many request bodies are being received at once; retry shortly');
    this.name = 'BodyBudgetFullError';
  }
}

/**
 * The raw request body, with the limits enforced while reading: a declared Content-Length over the limit is
 * refused before a byte is read, and a body that grows past it (chunked, or lying) is refused at the first
 * chunk that crosses it, so at most `limit` bytes plus one socket chunk are ever held. The bytes are taken
 * from the receiver-wide budget first (the whole declared length at once, or chunk by chunk), and the body
 * must arrive within `timeoutMs`.
 *
 * Reads straight from Node's `IncomingMessage` when served by @hono/node-server (no web-stream layer on the
 * hot path); `app.request()` in tests goes through the standard `Request` body instead.
 */
export async function readRawBody(
  request: Request,
  incoming: IncomingMessage | undefined,
  { limit, lease, timeoutMs }: ReadBodyOptions,
): Promise<Uint8Array> {
  const declaredHeader = incoming
    ? incoming.headers['content-length']
    : request.headers.get('content-length');
  const declared =
    declaredHeader === undefined || declaredHeader === null ? undefined : Number(declaredHeader);
  if (declared !== undefined && declared > limit) throw new PayloadTooLargeError(limit);
  // With a declared length (Node's parser never delivers more than it), the whole body is taken up front:
  // a request that cannot be held is refused before it is read, not halfway through.
  const takeEach = !(declared !== undefined && Number.isSafeInteger(declared));
  if (!takeEach && !lease.take(declared)) throw new BodyBudgetFullError();
  if (incoming) return readNodeStream(incoming, limit, lease, takeEach, timeoutMs);
  if (!request.body) return new Uint8Array(0);
  return readWebStream(request.body, limit, lease, takeEach);
}

function readNodeStream(
  incoming: IncomingMessage,
  limit: number,
  lease: BodyLease,
  takeEach: boolean,
  timeoutMs: number,
): Promise<Uint8Array> {
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    // Stops reading and holding: the rest is read and thrown away (never held) while the error answer goes
    // out, then the connection is closed: @hono/node-server drains for at most 500 ms / 64 MiB. Closing at once
    // instead would make the sender's next write fail (EPIPE/RST) before it had read our answer.
    const fail = (error: Error) => {
      cleanup();
      chunks.length = 0;
      incoming.resume();
      reject(error);
    };
    const timer = setTimeout(() => fail(new BodyTimeoutError(timeoutMs)), timeoutMs);
    lease.onEvicted(() => fail(new BodyBudgetFullError()));
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(new PayloadTooLargeError(limit));
      if (takeEach && !lease.take(chunk.length)) return fail(new BodyBudgetFullError());
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      lease.doneReading();
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

async function readWebStream(
  body: ReadableStream<Uint8Array>,
  limit: number,
  lease: BodyLease,
  takeEach: boolean,
): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    const refusal =
      size > limit
        ? new PayloadTooLargeError(limit)
        : takeEach && !lease.take(value.byteLength)
          ? new BodyBudgetFullError()
          : undefined;
    if (refusal) {
      await reader.cancel().catch(() => {});
      throw refusal;
    }
    chunks.push(value);
  }
  lease.doneReading();
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
