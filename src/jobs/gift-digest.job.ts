import type { Db } from "../db/client.js";
import { enqueueGiftDigests } from "../email/donation-emails.js";

/** The worker's digest pass: yesterday's gifts, once per organization on daily notices (its time zone). */
export const runGiftDigest = (db: Db, now: Date): Promise<number> => enqueueGiftDigests(db, now);
