import type { SignedRequest } from '@webhook-inbox/providers';

/** A request with a delivery's exact body and headers (looked up case-insensitively, as the receiver does). */
export function request(body: string, headers: Record<string, string>): SignedRequest {
  const h = new Headers(headers);
  return { rawBody: Buffer.from(body, 'utf8'), header: (name) => h.get(name) };
}

/** The keys `T` requires (not optional). */
export type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
