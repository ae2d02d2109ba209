import http from 'node:http';

/** A GET with the given `Host` header (fetch cannot set it): what a DNS-rebinding page's request carries. */
export function getWithHost(
  base: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; code?: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL(path, base),
      { agent: false, headers: { ...headers, host, connection: 'close' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
          resolve({ status: response.statusCode ?? 0, ...(code ? { code } : {}) });
        });
      },
    );
    request.on('error', reject);
    request.end();
  });
}
