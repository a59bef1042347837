import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { donorLinks, donorSessions, receipts, supporters } from "../../db/schema.js";

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
  values: { organizationId: number; tokenHash: string; email: string; csrfToken: string; expiresDate: Date },
) {
  await tx.insert(donorSessions).values(values);
}

export async function findLiveDonorSession(tx: Executor, organizationId: number, tokenHash: string) {
  const [row] = await tx
    .select({ email: donorSessions.email, csrfToken: donorSessions.csrfToken })
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

/** A signed-in donor's records: the organization's live supporters with this email (case-insensitive). */
const donorRecords = (organizationId: number, email: string) =>
  and(
    eq(supporters.organizationId, organizationId),
    sql`lower(${supporters.email}) = lower(${email})`,
    isNull(supporters.eraseDate),
  );

/** The language a donor's records keep (supporters.locale), the most recently updated record's first. */
export async function findDonorLocale(tx: Executor, organizationId: number, email: string) {
  const [row] = await tx
    .select({ locale: supporters.locale })
    .from(supporters)
    .where(and(donorRecords(organizationId, email), isNotNull(supporters.locale)))
    .orderBy(desc(supporters.updateDate), desc(supporters.id))
    .limit(1);
  return row?.locale ?? undefined;
}

/** The ids of a donor's records, in order. */
export async function listDonorSupporterIds(tx: Executor, organizationId: number, email: string) {
  const rows = await tx
    .select({ id: supporters.id })
    .from(supporters)
    .where(donorRecords(organizationId, email))
    .orderBy(supporters.id);
  return rows.map((row) => row.id);
}

/**
 * The receipts and yearly statements issued to these supporter records of the organization, void
 * ones included, newest first: what the portal's documents list shows (never the copies they print).
 */
export async function listDonorDocuments(tx: Executor, organizationId: number, supporterIds: readonly number[]) {
  if (supporterIds.length === 0) return [];
  return tx
    .select({
      id: receipts.id,
      organizationId: receipts.organizationId,
      supporterId: receipts.supporterId,
      kind: receipts.kind,
      year: receipts.year,
      number: receipts.number,
      amount: receipts.amount,
      currency: receipts.currency,
      giftDate: receipts.giftDate,
      reference: receipts.reference,
      createDate: receipts.createDate,
      voidDate: receipts.voidDate,
      voidReason: receipts.voidReason,
    })
    .from(receipts)
    .where(and(eq(receipts.organizationId, organizationId), inArray(receipts.supporterId, [...supporterIds])))
    .orderBy(desc(receipts.createDate), desc(receipts.id));
}
