import { eq, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { organizations } from "../../db/schema.js";

export type OrganizationRow = typeof organizations.$inferSelect;

/** The new organization, or undefined when its slug is taken. */
export async function insertOrganization(tx: Executor, values: typeof organizations.$inferInsert) {
  const [row] = await tx
    .insert(organizations)
    .values(values)
    .onConflictDoNothing({ target: organizations.slug })
    .returning();
  return row;
}

export async function findOrganizationById(tx: Executor, id: number) {
  const [row] = await tx.select().from(organizations).where(eq(organizations.id, id));
  return row;
}

export async function findOrganizationBySlug(tx: Executor, slug: string) {
  const [row] = await tx.select().from(organizations).where(eq(organizations.slug, slug));
  return row;
}

export async function countOrganizations(tx: Executor): Promise<number> {
  const [row] = await tx.select({ count: sql<number>`count(*)::int` }).from(organizations);
  return row?.count ?? 0;
}

export async function updateOrganizationColumns(
  tx: Executor,
  id: number,
  values: Partial<typeof organizations.$inferInsert>,
) {
  const [row] = await tx
    .update(organizations)
    .set({ ...values, updateDate: new Date() })
    .where(eq(organizations.id, id))
    .returning();
  return row;
}
