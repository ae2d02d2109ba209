import { errorLine } from '@webhook-inbox/inbox/error-text';

/** How an alert is POSTed: tries, backoff and the deadline of one request. */
export interface PostPolicy {
  fetch: typeof fetch;
  /** Tries, the first included. */
  maxAttempts: number;
  /** First retry delay; doubled each retry, with jitter, up to `retryMaxDelayMs`. */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** One POST may take this long before it is abandoned (and retried). */
  requestTimeoutMs: number;
}

/** `sent`: answered 2xx; `refused`: a 4xx other than 429 (not retried); `failed`: out of attempts, or stopped. */
export type PostResult =
  { outcome: 'sent' } | { outcome: 'refused'; status: number } | { outcome: 'failed'; problem: string };

/**
 * POSTs a JSON body, retried on a network error, a timeout, 429 or 5xx with exponential backoff and jitter
 * (honouring `Retry-After`), at most `maxAttempts` times; `stopping` cuts a request and the waits short.
 * `onRetry` is told of each retry (the alerter's counter).
 */
export async function postWithRetries(
  url: string,
  body: string,
  policy: PostPolicy,
  stopping: AbortSignal,
  onRetry: () => void,
): Promise<PostResult> {
  let problem = '';
  for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
    let delay =
      Math.min(policy.retryMaxDelayMs, policy.retryBaseDelayMs * 2 ** (attempt - 1)) *
      (0.5 + Math.random() / 2);
    try {
      const response = await policy.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(policy.requestTimeoutMs), stopping]),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return { outcome: 'sent' };
      problem = `HTTP ${response.status}`;
      if (response.status !== 429 && response.status < 500)
        return { outcome: 'refused', status: response.status };
      const wait = retryAfterMs(response);
      if (wait !== undefined) delay = Math.min(policy.retryMaxDelayMs, wait);
    } catch (error) {
      problem = errorLine(error);
    }
    if (stopping.aborted || attempt === policy.maxAttempts) break;
    onRetry();
    await pause(delay, stopping);
  }
  return { outcome: 'failed', problem };
}

/** Resolves after `ms`, or at once when `signal` aborts. The timer never keeps the process alive. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

function retryAfterMs(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
