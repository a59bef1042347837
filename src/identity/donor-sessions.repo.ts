import { and, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { donorLinks, donorSessions } from "../db/schema.js";

// The donors' side of the identity room: one-time links into an organization's donor portal and the
// sessions they open (docs/donor-portal.md). A donor is an email address within one organization.

export type DonorLinkPurpose = "sign_in" | "receipt";

export async function insertDonorLink(
  tx: Executor,
  values: { organizationId: number; tokenHash: string; email: string; purpose: DonorLinkPurpose; expiresDate: Date },
) {
  await tx.insert(donorLinks).values(values);
}

/**
 * Uses a link of this organization, atomically: a sign-in link once (a second use finds nothing),
 * a receipt link as often as its donor likes until it expires. Returns its email, or undefined.
 */
export async function useDonorLink(tx: Executor, organizationId: number, tokenHash: string) {
  const [row] = await tx
    .update(donorLinks)
    // The time as a value, not now(): Citus runs no volatile function inside COALESCE on a shard.
    .set({ usedDate: sql`coalesce(${donorLinks.usedDate}, ${new Date().toISOString()}::timestamptz)` })
    .where(
      and(
        eq(donorLinks.organizationId, organizationId),
        eq(donorLinks.tokenHash, tokenHash),
        gt(donorLinks.expiresDate, sql`now()`),
        or(eq(donorLinks.purpose, "receipt"), isNull(donorLinks.usedDate)),
      ),
    )
    .returning({ email: donorLinks.email, purpose: donorLinks.purpose });
  return row;
}

export async function insertDonorSession(
  tx: Executor,
  values: {
    organizationId: number;
    tokenHash: string;
    email: string;
    csrfToken: string;
    expiresDate: Date;
    userAgent: string | null;
    ipAddress: string | null;
  },
) {
  await tx.insert(donorSessions).values(values);
}

export async function findLiveDonorSession(tx: Executor, organizationId: number, tokenHash: string) {
  const [row] = await tx
    .select({
      id: donorSessions.id,
      email: donorSessions.email,
      csrfToken: donorSessions.csrfToken,
      seenSecondsAgo: sql<number>`extract(epoch from now() - ${donorSessions.lastSeenDate})::float8`,
    })
    .from(donorSessions)
    .where(
      and(
        eq(donorSessions.organizationId, organizationId),
        eq(donorSessions.tokenHash, tokenHash),
        gt(donorSessions.expiresDate, sql`now()`),
      ),
    )
    .limit(1);
  return row;
}

/** Marks a donor session used now, from this address. */
export async function touchDonorSession(
  tx: Executor,
  organizationId: number,
  id: number,
  ipAddress: string | undefined,
) {
  await tx
    .update(donorSessions)
    .set({ lastSeenDate: sql`now()`, ...(ipAddress ? { ipAddress } : {}) })
    .where(and(eq(donorSessions.organizationId, organizationId), eq(donorSessions.id, id)));
}

export async function deleteDonorSession(tx: Executor, organizationId: number, tokenHash: string) {
  await tx
    .delete(donorSessions)
    .where(and(eq(donorSessions.organizationId, organizationId), eq(donorSessions.tokenHash, tokenHash)));
}

/** Expired links and sessions of an organization, swept when a new one is made (no job needed). */
export async function deleteExpiredDonorCredentials(tx: Executor, organizationId: number) {
  await tx
    .delete(donorLinks)
    .where(and(eq(donorLinks.organizationId, organizationId), lt(donorLinks.expiresDate, sql`now()`)));
  await tx
    .delete(donorSessions)
    .where(and(eq(donorSessions.organizationId, organizationId), lt(donorSessions.expiresDate, sql`now()`)));
}
