import { and, desc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { receipts, supporters } from "../../db/schema.js";

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
