import type { Executor } from "../../db/client.js";
import { closeOpenCheckoutsBefore } from "./checkouts.repo.js";

/** Closes OPEN checkouts older than the expiry, without a payment (decisions.md §8). */
export async function expireCheckouts(db: Executor, now: Date, ttlSeconds: number): Promise<number> {
  return closeOpenCheckoutsBefore(db, new Date(now.getTime() - ttlSeconds * 1000));
}
