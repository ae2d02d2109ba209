import { readdirSync, readFileSync } from 'node:fs';

const MiB = 1024 * 1024;

/** Resident set size now and at its peak (VmHWM), in MiB, from /proc (Linux). */
export function memory(pid: number): { rssMiB: number; peakMiB: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) =>
      (Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024) / MiB;
    return { rssMiB: field('VmRSS'), peakMiB: field('VmHWM') };
  } catch {
    return { rssMiB: Number.NaN, peakMiB: Number.NaN };
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; returns the highest sample. */
export function sampleRss(pid: number, intervalMs = 200): { stop(): number } {
  let max = memory(pid).rssMiB;
  const timer = setInterval(() => {
    max = Math.max(max, memory(pid).rssMiB);
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(max, memory(pid).rssMiB);
    },
  };
}

// /proc/<pid>/stat counts CPU time in clock ticks: 100 per second on every Linux this runs on (USER_HZ).
const TICK_MS = 10;

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time used so far (user + system, ms) by a process, plus, with `children`, by its live child processes
 * and those it has already reaped (PostgreSQL: the postmaster and its backends). Linux only; NaN elsewhere.
 */
export function cpuMs(pid: number, options: { children?: boolean } = {}): number {
  const own = statFields(pid);
  if (!own) return Number.NaN;
  // After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
  let ticks = Number(own[11]) + Number(own[12]);
  if (options.children) {
    ticks += Number(own[13]) + Number(own[14]);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = statFields(Number(entry));
      if (fields && Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
    }
  }
  return ticks * TICK_MS;
}

/**
 * The machine's CPU time so far, all CPUs together (ms, from /proc/stat): busy (everything but idle and I/O
 * wait) and in all. Linux only; NaN elsewhere.
 */
export function machineCpuMs(): { busy: number; total: number } {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    const ticks = fields.slice(0, 8).map(Number);
    const total = ticks.reduce((sum, t) => sum + t, 0);
    return { busy: (total - ticks[3]! - ticks[4]!) * TICK_MS, total: total * TICK_MS };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

/** This process's CPU time so far (user + system, ms). */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The Node flags of an app's `start` script (`node <flags> src/server.ts`), read from its package.json: a
 * benchmark starts the process as `pnpm --filter <app> start` does.
 */
export function startFlagsOf(packageJson: string): string[] {
  const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'src/server.ts') {
    throw new Error(`unexpected start script in ${packageJson}: ${scripts.start}`);
  }
  return words.slice(1, -1);
}

/**
 * A process's read and write system calls (`syscr`, `syscw`: a `writev` counts once) and its main thread's
 * voluntary context switches so far, from /proc (Linux).
 */
export function syscalls(pid: number): { reads: number; writes: number; switches: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (text: string, name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1]);
  return {
    reads: field(io, 'syscr'),
    writes: field(io, 'syscw'),
    switches: field(status, 'voluntary_ctxt_switches'),
  };
}
