import { readFileSync, realpathSync } from 'node:fs';

/** The file system a path is on. */
export interface MountInfo {
  /** Where it is mounted. */
  point: string;
  /** ext4, xfs, tmpfs... */
  type: string;
  /**
   * Mounted with `discard`: blocks are trimmed on the device as soon as they are freed, so freeing a large file
   * at once (PostgreSQL dropping a table) sends the device one large trim, which other writes, the WAL's among
   * them, queue behind.
   */
  onlineDiscard: boolean;
}

/** The mount `file` is on, from /proc/mounts (Linux); undefined elsewhere. */
export function mountOf(file: string): MountInfo | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/mounts', 'utf8');
  } catch {
    return undefined;
  }
  const resolved = realpathSync(file);
  let found: MountInfo | undefined;
  for (const line of table.split('\n')) {
    const [, escapedPoint, type, options] = line.split(' ');
    if (!escapedPoint || !type || !options) continue;
    // /proc/mounts writes a space in a path as \040 (and a tab, newline and backslash likewise, in octal).
    const point = escapedPoint.replace(/\\([0-7]{3})/g, (_, octal: string) =>
      String.fromCharCode(parseInt(octal, 8)),
    );
    const inside = resolved === point || resolved.startsWith(point === '/' ? '/' : `${point}/`);
    // The longest mount point that holds the path is the one it is on.
    if (inside && (!found || point.length >= found.point.length)) {
      found = { point, type, onlineDiscard: options.split(',').includes('discard') };
    }
  }
  return found;
}
