import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { applications, installations } from "../../db/schema.js";

export type ApplicationRow = typeof applications.$inferSelect;

export async function insertApplication(tx: Executor, values: typeof applications.$inferInsert) {
  const [row] = await tx.insert(applications).values(values).returning();
  if (!row) throw new Error("application insert returned nothing");
  return row;
}

export async function findApplicationByClientId(tx: Executor, clientId: string) {
  const [row] = await tx.select().from(applications).where(eq(applications.clientId, clientId)).limit(1);
  return row;
}

/** The application URL and callbacks of one application, or of all of them. */
export function listApplicationUrls(tx: Executor, applicationId?: number) {
  return tx
    .select({ applicationUrl: applications.applicationUrl, callbackUrls: applications.callbackUrls })
    .from(applications)
    .where(applicationId === undefined ? undefined : eq(applications.id, applicationId));
}

export function listOwnedApplicationRows(tx: Executor, organizationId: number) {
  return tx
    .select()
    .from(applications)
    .where(eq(applications.ownerOrganizationId, organizationId))
    .orderBy(applications.createDate, applications.id);
}

export async function updateApplicationRow(
  tx: Executor,
  applicationId: number,
  changes: Partial<typeof applications.$inferInsert>,
) {
  const [row] = await tx.update(applications).set(changes).where(eq(applications.id, applicationId)).returning();
  if (!row) throw new Error("application vanished");
  return row;
}

/** Whether a new installation was made (false: it existed). */
export async function insertInstallation(tx: Executor, organizationId: number, applicationId: number) {
  const [inserted] = await tx
    .insert(installations)
    .values({ organizationId, applicationId })
    .onConflictDoNothing()
    .returning();
  return Boolean(inserted);
}

/** Whether there was an installation to remove. */
export async function deleteInstallation(tx: Executor, organizationId: number, applicationId: number) {
  const removed = await tx
    .delete(installations)
    .where(and(eq(installations.organizationId, organizationId), eq(installations.applicationId, applicationId)))
    .returning();
  return removed.length > 0;
}

export async function findInstallation(tx: Executor, organizationId: number, applicationId: number) {
  const [row] = await tx
    .select()
    .from(installations)
    .where(and(eq(installations.organizationId, organizationId), eq(installations.applicationId, applicationId)))
    .limit(1);
  return row;
}

export function listInstallationRows(tx: Executor, organizationId: number) {
  return tx
    .select({ installation: installations, application: applications })
    .from(installations)
    .innerJoin(applications, eq(applications.id, installations.applicationId))
    .where(eq(installations.organizationId, organizationId))
    .orderBy(installations.createDate, installations.id);
}
