import { and, asc, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { consentRecords } from "../../db/schema.js";
import { CONSENT_NAMES, type ConsentName } from "./supporters.schemas.js";

export type ConsentRecordRow = typeof consentRecords.$inferSelect;

export type DeclaredConsents = Partial<Record<ConsentName, boolean>>;

export async function insertConsentRecord(
  tx: Executor,
  values: {
    organizationId: number;
    supporterId: number;
    donationId: number | null;
    source: "checkout";
    consents: DeclaredConsents;
    applied: boolean;
  },
): Promise<ConsentRecordRow> {
  const [row] = await tx.insert(consentRecords).values(values).returning();
  if (!row) throw new Error("consent record insert returned nothing");
  return row;
}

/** A supporter's consent records, oldest first. */
export function listConsentRecords(tx: Executor, organizationId: number, supporterId: number) {
  return tx
    .select()
    .from(consentRecords)
    .where(and(eq(consentRecords.organizationId, organizationId), eq(consentRecords.supporterId, supporterId)))
    .orderBy(asc(consentRecords.id));
}

/** A record on the wire: each consent true, false, or null when it was not declared. */
export function consentRecordToWire(row: ConsentRecordRow) {
  const declared = (row.consents ?? {}) as DeclaredConsents;
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    source: row.source,
    donation_id: row.donationId,
    applied: row.applied,
    ...(Object.fromEntries(CONSENT_NAMES.map((name) => [name, declared[name] ?? null])) as Record<
      ConsentName,
      boolean | null
    >),
  };
}

export type ConsentRecordWire = ReturnType<typeof consentRecordToWire>;
