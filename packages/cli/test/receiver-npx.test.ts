import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { findFreePorts } from '@webhook-inbox/testing/embedded';
import { describe, expect, it } from 'vitest';

// `npx webhook-inbox receiver` as a team runs it: npm, then `sh -c`, then the bin. npm exits on SIGTERM without
// passing the signal on, so the receiver must notice that its parent is gone and stop.

const db = useTestDatabase();
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Every process below `pid`, read from /proc (Linux), children before grandchildren. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, the last `)` ends it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Running: present and not a zombie (an orphan's zombie waits for an init that may never reap it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npx webhook-inbox receiver', () => {
  // Its deadlines catch a hang, not slowness: npx, npm and the receiver start slowly on a loaded machine.
  it('stops, port closed and every process gone, when npx is sent SIGTERM', async () => {
    const [port = 0, managementPort = 0] = await findFreePorts(2);
    const npx = spawn('npx', ['--no-install', 'webhook-inbox', 'receiver'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        STRIPE_WEBHOOK_SECRET: 'whsec_npx_receiver_test',
        PORT: String(port),
        MANAGEMENT_PORT: String(managementPort),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npx.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npx.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(npx, 'exit');
    let tree: number[] = [];
    try {
      await waitFor(
        async () => {
          if (npx.exitCode !== null) throw new Error(`npx exited:\n${output}`);
          const ready = await fetch(`http://127.0.0.1:${managementPort}/readyz`).catch(() => undefined);
          return ready?.status === 200;
        },
        { timeout: 180_000, message: `the receiver is ready under npx; its output:\n${output}` },
      );
      tree = descendants(npx.pid!);
      // npm, `sh -c` (unless the shell execs) and the bin's node.
      expect(tree.length, `below npx: ${tree.join(', ')}`).toBeGreaterThanOrEqual(1);
      expect(await accepts(port)).toBe(true);

      npx.kill('SIGTERM');
      await exited;
      await waitFor(async () => !(await accepts(port)) && !(await accepts(managementPort)), {
        timeout: 60_000,
        message: `the receiver's ports closed after npx's SIGTERM; output:\n${output}`,
      });
      await waitFor(() => tree.every((pid) => !alive(pid)), {
        timeout: 60_000,
        message: `every process npx started exited: ${tree.filter(alive).join(', ')} still running`,
      });
      expect(output).not.toMatch(/failed to start|"level":(50|60)/);
    } finally {
      if (npx.exitCode === null) npx.kill('SIGKILL');
      for (const pid of tree.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 400_000);
});
