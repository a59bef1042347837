import type { Db } from "../db/client.js";
import { enqueueCardExpiryWarnings } from "../email/donation-emails.js";

/** Donors are warned this many days before a renewal their card will have expired for. */
export const CARD_EXPIRY_NOTICE_DAYS = 30;

/** The worker's card-expiry pass: warns, once per card, donors whose card expires before their next renewal. */
export const runCardExpiryScan = (db: Db, now: Date): Promise<number> =>
  enqueueCardExpiryWarnings(db, now, CARD_EXPIRY_NOTICE_DAYS);
