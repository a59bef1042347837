import type { Executor } from "../db/client.js";
import { expireCheckouts } from "../modules/checkouts/checkout-expiry.service.js";

/** The worker's checkout-expiry pass: OPEN checkouts older than the TTL are closed; returns how many. */
export const runCheckoutExpiry = (db: Executor, now: Date, ttlSeconds: number): Promise<number> =>
  expireCheckouts(db, now, ttlSeconds);
