/** A client of the receiver's admin API over real HTTP, as a token's bearer calls it. Not a test file. */

export interface AdminAnswer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}

/** Calls `/admin<path>` on the management listener `baseUrl()` gives, with `token` as the bearer and a JSON body. */
export function adminCaller(
  baseUrl: () => string,
): (token: string, method: string, path: string, body?: unknown) => Promise<AdminAnswer> {
  return async (token, method, path, body) => {
    const response = await fetch(new URL(`/admin${path}`, baseUrl()), {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as AdminAnswer['body'] };
  };
}
