import { eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { organizationProfiles } from "../../db/schema.js";

export type LegalProfileRow = typeof organizationProfiles.$inferSelect;
export type LegalProfileColumns = Partial<Omit<LegalProfileRow, "organizationId" | "updateDate">>;

/** The organization's legal profile; undefined until anything was saved. */
export async function findLegalProfile(tx: Executor, organizationId: number): Promise<LegalProfileRow | undefined> {
  const [row] = await tx
    .select()
    .from(organizationProfiles)
    .where(eq(organizationProfiles.organizationId, organizationId));
  return row;
}

/** Writes the profile's columns (the row is made on the first save). */
export async function saveLegalProfile(tx: Executor, organizationId: number, values: LegalProfileColumns) {
  const [row] = await tx
    .insert(organizationProfiles)
    .values({ organizationId, ...values })
    // A value, not now(): Citus refuses a non-immutable function in an upsert's DO UPDATE on a distributed table.
    .onConflictDoUpdate({ target: organizationProfiles.organizationId, set: { ...values, updateDate: new Date() } })
    .returning();
  if (!row) throw new Error("legal profile upsert returned nothing");
  return row;
}
