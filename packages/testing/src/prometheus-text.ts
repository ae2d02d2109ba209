/**
 * The value of one sample in Prometheus' text exposition format: the series named `name` whose labels include
 * every one of `labels` (others may be present). Undefined when no such series is exposed.
 *
 * @example
 * metricValue(await (await fetch(`${url}/metrics`)).text(), 'webhook_events', { status: 'dead' });
 */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    if (Object.entries(labels).every(([key, value]) => present.get(key) === value)) return Number(match[3]);
  }
  return undefined;
}
