/**
 * The console's break-glass sign-in over HTTP, as an operator's browser makes it: the login page's nonce and the
 * cookie that carries it, then the form posted with the admin token. Tests and the console bench sign in this way.
 */

/** The sign-in form of the console at `consoleUrl` (e.g. `http://127.0.0.1:3002/console`): its nonce and cookie. */
export async function loginNonce(consoleUrl: string): Promise<{ nonce: string; cookie: string }> {
  const page = await fetch(`${consoleUrl}/login`);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const nonce = /name="_nonce" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  return { nonce, cookie };
}

/**
 * Signs in with the break-glass admin `token`, `note` as the reason typed; the session cookie
 * (`wi_console_session=...`). Throws when the console does not answer the sign-in with a session.
 */
export async function breakGlassSession(consoleUrl: string, token: string, note = 'test'): Promise<string> {
  const { nonce, cookie: loginCookie } = await loginNonce(consoleUrl);
  const response = await fetch(`${consoleUrl}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: loginCookie },
    body: new URLSearchParams({ _nonce: nonce, note, token, next: '' }),
  });
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('wi_console_session='));
  if (response.status !== 303 || !cookie) throw new Error(`console sign-in answered ${response.status}`);
  return cookie.split(';')[0]!;
}
