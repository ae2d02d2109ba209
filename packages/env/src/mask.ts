/**
 * Query parameters whose value is a credential: libpq's `password` and `sslpassword`, and the `token`, `key`,
 * `secret`, `auth` ... that other drivers and SMTP services take. Matched anywhere in the name
 * (`access_token`, `api_key`, `sslkey`), case-insensitively: hiding a harmless value costs nothing.
 */
const SECRET_PARAMETER = /pass|pwd|secret|token|key|auth|credential|signature/i;

/**
 * A connection URL as it is safe to log, from the parsed URL rather than a pattern over the text: the whole user
 * info (`user:password@`, where a password may itself contain `@` or `:`) becomes `***@`, and every
 * secret-looking query parameter's value becomes `***` (a fragment is dropped). A value that does not parse as a URL is not printed at
 * all, only its scheme.
 *
 * @example
 * maskUrl('postgres://app:p@ss@db:5432/inbox?sslmode=require&password=x')
 * // 'postgres://***@db:5432/inbox?sslmode=require&password=***'
 */
export function maskUrl(text: string): string {
  const scheme = /^[a-z][a-z\d+.-]*:/i.exec(text)?.[0] ?? '';
  // Without `//` there is no authority to find the user info in (`postgres:user:pw@db` parses, all path).
  const url = text.startsWith(`${scheme}//`) ? URL.parse(text) : null;
  if (!scheme || !url) return `${scheme}[unparseable URL hidden]`;
  if (url.username !== '' || url.password !== '') {
    url.password = '';
    url.username = '***';
  }
  url.hash = '';
  for (const name of new Set(url.searchParams.keys())) {
    if (SECRET_PARAMETER.test(name)) url.searchParams.set(name, '***');
  }
  return url.href;
}
