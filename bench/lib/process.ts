import { readFileSync } from 'node:fs';

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
