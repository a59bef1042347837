import type { Db, Executor } from "../db/client.js";
import {
  type DonorLinkPurpose,
  deleteDonorSession,
  deleteExpiredDonorCredentials,
  findLiveDonorSession,
  insertDonorLink,
  insertDonorSession,
  touchDonorSession,
  useDonorLink,
} from "./donor-sessions.repo.js";
import { generateSecret, hashSecret } from "./secrets.js";
import { newSessionSecrets, TOUCH_INTERVAL_SECONDS } from "./session-secrets.js";
import type { SessionContext } from "./sessions.service.js";
import { normalizeEmail } from "./users.service.js";

export type { DonorLinkPurpose };

/** A link from the sign-in form works once, for 15 minutes; one from a receipt email for 30 days. */
export const LINK_TTL_SECONDS: Record<DonorLinkPurpose, number> = { sign_in: 15 * 60, receipt: 30 * 86400 };
/** A donor session lasts a working day; the cookie expires with it. */
export const DONOR_SESSION_TTL_SECONDS = 12 * 3600;
export const DONOR_LINK_PREFIX = "dnt_dl";
const SESSION_PREFIX = "dnt_ds";

/** A new link token for an email (only its hash is stored): the way into the organization's donor portal. */
export async function mintDonorLinkToken(
  tx: Executor,
  link: { organizationId: number; email: string; purpose: DonorLinkPurpose },
): Promise<string> {
  const token = generateSecret(DONOR_LINK_PREFIX);
  await insertDonorLink(tx, {
    organizationId: link.organizationId,
    tokenHash: hashSecret(token),
    email: normalizeEmail(link.email),
    purpose: link.purpose,
    expiresDate: new Date(Date.now() + LINK_TTL_SECONDS[link.purpose] * 1000),
  });
  return token;
}

/**
 * Follows a link: a live one (a sign-in link not used before, a receipt link before it expires) opens a
 * new session for its email, the same way a member's sign-in does (a random token, its hash kept, a
 * CSRF token, the device and address). Returns the session's cookie token, or undefined when the link
 * is unknown, expired or used.
 */
export async function enterWithDonorLink(
  db: Db,
  organizationId: number,
  token: string,
  previousSessionToken: string | undefined,
  context: Pick<SessionContext, "userAgent" | "ipAddress"> = {},
): Promise<string | undefined> {
  if (token.length === 0 || token.length > 200) return undefined;
  return db.transaction(async (tx) => {
    const link = await useDonorLink(tx, organizationId, hashSecret(token));
    if (!link) return undefined;
    // A new session on every sign-in: a cookie planted before it is worth nothing after it.
    if (previousSessionToken) await deleteDonorSession(tx, organizationId, hashSecret(previousSessionToken));
    const secrets = newSessionSecrets(SESSION_PREFIX);
    await insertDonorSession(tx, {
      organizationId,
      tokenHash: secrets.tokenHash,
      email: link.email,
      csrfToken: secrets.csrfToken,
      expiresDate: new Date(Date.now() + DONOR_SESSION_TTL_SECONDS * 1000),
      userAgent: context.userAgent?.slice(0, 500) ?? null,
      ipAddress: context.ipAddress ?? null,
    });
    return secrets.token;
  });
}

/** The live donor session of a cookie's token in this organization: its email and CSRF token. */
export async function loadDonorSession(
  db: Db,
  organizationId: number,
  token: string | undefined,
  ipAddress?: string,
): Promise<{ email: string; csrfToken: string } | undefined> {
  if (!token || token.length > 200) return undefined;
  const row = await findLiveDonorSession(db, organizationId, hashSecret(token));
  if (!row) return undefined;
  if (row.seenSecondsAgo > TOUCH_INTERVAL_SECONDS) await touchDonorSession(db, organizationId, row.id, ipAddress);
  return { email: row.email, csrfToken: row.csrfToken };
}

export async function endDonorSession(db: Db, organizationId: number, token: string | undefined): Promise<void> {
  if (!token) return;
  await deleteDonorSession(db, organizationId, hashSecret(token));
}

/** Expired links and sessions of an organization, swept when a new one is made (no job needed). */
export async function sweepExpiredDonorCredentials(tx: Executor, organizationId: number): Promise<void> {
  await deleteExpiredDonorCredentials(tx, organizationId);
}
