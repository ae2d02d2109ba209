/**
 * Stops this process the way SIGTERM does once its parent is gone. `npx webhook-inbox receiver` runs the bin under
 * `sh -c`, a child of npm; npm exits on SIGTERM (143) without passing the signal on, and the receiver, adopted by
 * init, would go on serving. A parent pid that changed is that orphaning; a process started by init or as a
 * container's first process (parent pid 0 or 1) has none to lose.
 */
export function stopWhenOrphaned(intervalMs = 500): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    // The service's own SIGTERM handler runs: a graceful stop, then exit.
    process.kill(process.pid, 'SIGTERM');
  }, intervalMs);
  timer.unref();
}
