import { execFileSync } from 'node:child_process';

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

/** The mount `file` is on, as util-linux's `findmnt` says (Linux); undefined where it cannot say. */
export function mountOf(file: string): MountInfo | undefined {
  let output: string;
  try {
    output = execFileSync('findmnt', ['--json', '--target', file, '--output', 'TARGET,FSTYPE,OPTIONS'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
  const [mount] = (
    JSON.parse(output) as { filesystems: { target: string; fstype: string; options: string }[] }
  ).filesystems;
  if (!mount) return undefined;
  return {
    point: mount.target,
    type: mount.fstype,
    onlineDiscard: mount.options.split(',').includes('discard'),
  };
}
