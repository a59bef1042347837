import type { Db } from "../db/client.js";
import { runQueuedImports } from "../modules/imports/imports.service.js";
import { startLoop } from "./loop.js";

/** How often the worker looks for imports queued from the panel: an upload starts within this. */
export const IMPORT_INTERVAL_SECONDS = 2;
const STALLED_CHECK_MS = 60_000;

/**
 * Runs the imports queued from the panel (docs/import.md) every `intervalSeconds` until stopped, each
 * to its end before the next; a failed pass is reported and the loop goes on. Apart from the billing
 * worker: an import of 100,000 rows takes minutes, which no renewal should wait for. Stopping ends the
 * import under way after its batch (it is failed, saying so) rather than waiting for its last row.
 */
export function startImportRunner(
  db: Db,
  options: { intervalSeconds?: number; organizationIds?: readonly number[]; onError(error: unknown): void },
) {
  const stopping = new AbortController();
  // Stalled imports are looked for once a minute: each look reads every organization's (every shard's).
  let lastStalledCheck = 0;
  const run = () => {
    const now = new Date();
    const checkStalled = now.getTime() - lastStalledCheck >= STALLED_CHECK_MS;
    if (checkStalled) lastStalledCheck = now.getTime();
    return runQueuedImports(db, {
      now,
      signal: stopping.signal,
      organizationIds: options.organizationIds,
      checkStalled,
    });
  };
  const loop = startLoop(run, {
    intervalSeconds: options.intervalSeconds ?? IMPORT_INTERVAL_SECONDS,
    onError: options.onError,
  });
  return {
    async stop() {
      stopping.abort();
      await loop.stop();
    },
  };
}
