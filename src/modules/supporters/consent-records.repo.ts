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
    /** checkout: declared with a gift; import: read from another platform's export (docs/import.md). */
    source: "checkout" | "import";
    consents: DeclaredConsents;
    applied: boolean;
  },
): Promise<ConsentRecordRow> {
  const [row] = await tx.insert(consentRecords).values(values).returning();
  if (!row) throw new Error("consent record insert returned nothing");
  return row;
}

type ConsentRecordValues = Parameters<typeof insertConsentRecord>[1];

/** Several records in one statement (an import's batch). */
export async function insertConsentRecords(tx: Executor, values: ConsentRecordValues[]): Promise<void> {
  if (values.length > 0) await tx.insert(consentRecords).values(values);
}

/** The consents a set of supporter fields declares (true or false); the others were not said. */
export function declaredConsents(values: Partial<Record<ConsentName, unknown>>): DeclaredConsents {
  const declared: DeclaredConsents = {};
  for (const name of CONSENT_NAMES) {
    const value = values[name];
    if (typeof value === "boolean") declared[name] = value;
  }
  return declared;
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
