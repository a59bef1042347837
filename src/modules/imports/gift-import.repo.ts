import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { campaigns, donations, paymentMethods, payments } from "../../db/schema.js";

/** The organization's campaigns by title and slug: what an imported gift's campaign cell names. */
export function listCampaignNames(tx: Executor, organizationId: number) {
  return tx
    .select({ id: campaigns.id, title: campaigns.title, slug: campaigns.slug })
    .from(campaigns)
    .where(eq(campaigns.organizationId, organizationId))
    .orderBy(campaigns.id);
}

/** Payments imported before, by their id on the other platform (locked: a re-import may correct them). */
export async function lockImportedPayments(tx: Executor, organizationId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return [];
  return tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, organizationId), inArray(payments.externalId, [...externalIds])))
    .orderBy(payments.id)
    .for("update");
}

/** Donations by id or by their id on the other platform (a recurring gift's plan), locked. */
export async function lockImportedDonations(
  tx: Executor,
  organizationId: number,
  ids: readonly number[],
  externalIds: readonly string[],
) {
  const found = [];
  if (ids.length > 0) {
    found.push(
      ...(await tx
        .select()
        .from(donations)
        .where(and(eq(donations.organizationId, organizationId), inArray(donations.id, [...ids])))
        .orderBy(donations.id)
        .for("update")),
    );
  }
  if (externalIds.length > 0) {
    found.push(
      ...(await tx
        .select()
        .from(donations)
        .where(and(eq(donations.organizationId, organizationId), inArray(donations.externalId, [...externalIds])))
        .orderBy(donations.id)
        .for("update")),
    );
  }
  return found;
}

/** The payment methods of these ids (what an imported payment's wire names). */
export async function findMethods(tx: Executor, organizationId: number, ids: readonly number[]) {
  if (ids.length === 0) return [];
  return tx
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.organizationId, organizationId), inArray(paymentMethods.id, [...ids])));
}
