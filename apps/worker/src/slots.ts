/** At most `n` holders at once: resolves, in order of asking, with the function that frees the slot. */
export function slots(n: number): () => Promise<() => void> {
  let free = n;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return async () => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    return release;
  };
}
