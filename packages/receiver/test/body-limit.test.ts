import http from 'node:http';
import { readFileSync } from 'node:fs';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorded } from './helpers.ts';
import {
  receiverEnv,
  spawnReceiver,
  stripeDelivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

// A 100 MB body against a real receiver process: refused with 413 long before it is all sent, and the
// receiver's memory never holds it.

const db = useTestDatabase();
let receiver: SpawnedReceiver;
const HUNDRED_MB = 100 * 1024 * 1024;

beforeAll(async () => {
  receiver = await spawnReceiver(receiverEnv(db.url, { LOG_LEVEL: 'warn' }));
});
afterAll(async () => {
  await receiver?.stop();
});

/** Peak resident set size of a process so far (kB → bytes), from the kernel. */
function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

interface Upload {
  status: number;
  body: string;
  /** Bytes written by the time the response arrived. */
  sentWhenAnswered: number;
  ms: number;
}

/** Streams `total` bytes in 64 KiB chunks (one reused buffer), stopping as soon as a response arrives. */
function upload(url: string, total: number, headers: Record<string, string | number>): Promise<Upload> {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const started = Date.now();
  const delivery = stripeDelivery();
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const request = http.request(new URL('/webhooks/stripe', url), {
      method: 'POST',
      agent: false,
      // Keep-alive, as providers' HTTP clients send: the receiver then reads and discards the rest for a
      // moment (never holding it) so the answer is read before the connection is cut. A client that asked for
      // `Connection: close` gets the 413 and an immediate close (Node's behaviour).
      headers: { ...delivery.headers, connection: 'keep-alive', ...headers },
    });
    request.on('response', (response) => {
      answered = true;
      const sentWhenAnswered = sent;
      const chunks: Buffer[] = [];
      response.on('data', (data: Buffer) => chunks.push(data));
      response.on('end', () => {
        request.destroy();
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          sentWhenAnswered,
          ms: Date.now() - started,
        });
      });
    });
    // The server closing the connection mid-upload is expected; only fail if no response ever came.
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    // One chunk per turn of the event loop, as a client streaming from a file or a socket does. A synchronous
    // loop, whose writes a fast reader on loopback keeps accepting, never gets to read the response, and then
    // counts what the receiver discarded after answering as sent before the answer.
    const pump = () => {
      if (answered || request.destroyed) return;
      if (sent >= total) return void request.end();
      sent += chunk.length;
      if (request.write(chunk)) setImmediate(pump);
      else request.once('drain', pump);
    };
    pump();
  });
}

describe('a 100 MB body', () => {
  it('streamed without a length (chunked): 413 payload_too_large before it is sent, memory bounded', async () => {
    const pid = receiver.child.pid!;
    const before = peakRss(pid);
    const before_rows = await recorded(db.url);
    const result = await upload(receiver.url, HUNDRED_MB, { 'transfer-encoding': 'chunked' });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    // Refused at the limit (1 MiB), not after reading everything: the client had sent a small part of it.
    expect(result.sentWhenAnswered).toBeLessThan(HUNDRED_MB / 4);
    expect(peakRss(pid) - before).toBeLessThan(32 * 1024 * 1024);
    expect(await recorded(db.url)).toEqual(before_rows);
  });

  it('with a declared Content-Length of 100 MB: refused up front, before the body', async () => {
    const pid = receiver.child.pid!;
    const before = peakRss(pid);
    const result = await upload(receiver.url, HUNDRED_MB, { 'content-length': HUNDRED_MB });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(result.sentWhenAnswered).toBeLessThan(HUNDRED_MB / 4);
    expect(peakRss(pid) - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('the receiver keeps serving afterwards', async () => {
    const response = await fetch(new URL('/readyz', receiver.managementUrl));
    expect(response.status).toBe(200);
  });
});
