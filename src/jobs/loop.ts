/**
 * Runs `pass` now, then again `intervalSeconds` after each pass ends, until stopped; a failed pass
 * is reported and the loop goes on. `stop()` waits for the pass under way.
 */
export function startLoop(
  pass: () => Promise<unknown>,
  options: { intervalSeconds: number; onError(error: unknown): void },
) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const tick = () => {
    running = pass()
      .catch(options.onError)
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, options.intervalSeconds * 1000);
      });
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
