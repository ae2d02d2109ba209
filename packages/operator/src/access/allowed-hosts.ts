import net from 'node:net';
import { CodedError } from '@webhook-inbox/inbox/errors';
import { normalizeAddress } from './forwarded.ts';

/**
 * The `Host` names a listener that is not for the internet answers: the receiver's management listener
 * (`MANAGEMENT_ALLOWED_HOSTS`) and the worker's metrics listener (`WORKER_ALLOWED_HOSTS`). A DNS-rebinding page (its
 * own name made to resolve to 127.0.0.1) sends its own name as `Host`; refused, it cannot read `/metrics` or try
 * tokens from an operator's browser.
 */
export interface AllowedHosts {
  /** True when a request with this `Host` header is answered. */
  allows(host: string | undefined): boolean;
  /** The entries as given, for the configuration's log line. */
  readonly entries: readonly string[];
}

/** The default: the loopback names, on any port (a published container port differs from the listener's). */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

interface Entry {
  /** A lower-case name or IP address; unset for a CIDR range. */
  host?: string;
  range?: net.BlockList;
  /** Only this port; unset: any. */
  port?: number;
}

/** A comma-separated list of entries (`localhost,metrics.internal,10.0.0.0/8`), as the variables hold it. */
export function parseHostList(value: string): AllowedHosts {
  return parseAllowedHosts(
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  );
}

/**
 * Parses entries: names (`metrics.internal`), IP addresses (`10.1.2.3`, `[fd00::5]`, each with `:port` to allow
 * only that port) and CIDR ranges (`10.0.0.0/8`, for scrapers that use a pod's address). Throws a `TypeError`
 * naming the first entry that is none of them.
 */
export function parseAllowedHosts(entries: readonly string[]): AllowedHosts {
  const parsed = entries.map(parseEntry);
  return {
    entries,
    allows(header) {
      const host = header === undefined ? undefined : splitHost(header.trim().toLowerCase());
      if (!host) return false;
      const address = normalizeAddress(host.name);
      return parsed.some((entry) => {
        if (entry.port !== undefined && entry.port !== host.port) return false;
        if (entry.range) {
          const family = address === null ? 0 : net.isIP(address);
          return family !== 0 && entry.range.check(address!, family === 6 ? 'ipv6' : 'ipv4');
        }
        return entry.host === (address ?? host.name);
      });
    },
  };
}

function parseEntry(entry: string): Entry {
  const text = entry.trim().toLowerCase();
  const wrong = () =>
    new TypeError(
      `"${entry.slice(0, 60)}" is not a host name, IP address (with an optional :port) or CIDR range`,
    );
  if (text.includes('/')) {
    const [address = '', prefix = ''] = text.split('/');
    const family = net.isIP(address);
    const bits = Number(prefix);
    if (family === 0 || !/^\d{1,3}$/.test(prefix) || bits > (family === 6 ? 128 : 32)) throw wrong();
    const range = new net.BlockList();
    range.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
    return { range };
  }
  // A bare IPv6 address has colons of its own and no port.
  if (net.isIP(text) === 6) return { host: normalizeAddress(text)! };
  const host = splitHost(text);
  if (!host) throw wrong();
  return {
    host: normalizeAddress(host.name) ?? host.name,
    ...(host.explicitPort ? { port: host.port } : {}),
  };
}

/**
 * A `Host` value as name and port (80 when absent, as a browser sends it for port 80), or undefined when it is not
 * one: `name[:port]`, `[ipv6][:port]`.
 */
function splitHost(value: string): { name: string; port: number; explicitPort: boolean } | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)\.?(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const port = match[2] === undefined ? 80 : Number(match[2]);
  if (port > 65_535) return undefined;
  return { name: match[1]!, port, explicitPort: match[2] !== undefined };
}

/** A request whose `Host` the listener does not answer for: 421 `host_not_allowed`. */
export class HostNotAllowedError extends CodedError<'host_not_allowed'> {
  override name = 'HostNotAllowedError';
  constructor(host: unknown, variable: string) {
    super(
      'host_not_allowed',
      `this listener does not answer for Host ${typeof host === 'string' ? JSON.stringify(host.slice(0, 100)) : '(none)'}; ` +
        `use one in ${variable}`,
    );
  }
}

/** What `allowedHostsOnly` reads of a request: Hono's `Context` has it. */
interface HostRequest {
  req: { path: string; url: string };
  env: unknown;
}

/**
 * A Hono middleware refusing (throwing `HostNotAllowedError`, which the app answers 421 `host_not_allowed`) a
 * request whose `Host` is not allowed, except on the `open` paths: health probes, which reveal nothing and which
 * an orchestrator sends with the pod's address as `Host`. `variable` is what the refusal tells the caller to set.
 */
export function allowedHostsOnly(
  hosts: AllowedHosts,
  variable: string,
  open: readonly string[] = ['/healthz', '/readyz'],
): (c: HostRequest, next: () => Promise<void>) => Promise<void> {
  return async (c, next) => {
    if (open.includes(c.req.path)) return next();
    // The header as sent; without a socket (an in-process request), the URL's.
    const incoming = (c.env as { incoming?: { headers: Record<string, unknown> } } | undefined)?.incoming;
    const host = incoming ? incoming.headers.host : new URL(c.req.url).host;
    if (typeof host !== 'string' || !hosts.allows(host)) throw new HostNotAllowedError(host, variable);
    return next();
  };
}

/** The loopback names, and the listener's own address when it is one (not `0.0.0.0` or `::`). */
export function defaultAllowedHosts(listenerHost: string): AllowedHosts {
  const own = listenerHost.includes(':') ? `[${listenerHost}]` : listenerHost;
  const wildcard = ['0.0.0.0', '[::]', '[0:0:0:0:0:0:0:0]'].includes(own);
  const entries: string[] = [...LOOPBACK_HOSTS];
  if (wildcard || entries.includes(own.toLowerCase())) return parseAllowedHosts(entries);
  try {
    return parseAllowedHosts([...entries, own]);
  } catch {
    return parseAllowedHosts(entries); // a name no Host header can carry
  }
}
