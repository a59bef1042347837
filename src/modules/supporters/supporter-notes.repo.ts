import { and, desc, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { applications, supporterNotes } from "../../db/schema.js";

export type SupporterNoteRow = typeof supporterNotes.$inferSelect;

export async function insertSupporterNote(
  tx: Executor,
  values: {
    organizationId: number;
    supporterId: number;
    authorUserId: number | null;
    authorName: string;
    body: string;
  },
): Promise<SupporterNoteRow> {
  const [row] = await tx.insert(supporterNotes).values(values).returning();
  if (!row) throw new Error("supporter note insert returned nothing");
  return row;
}

/** A supporter's notes, newest first (`limit` undefined: all of them, as their data export gives them). */
export function listSupporterNoteRows(tx: Executor, organizationId: number, supporterId: number, limit?: number) {
  const query = tx
    .select()
    .from(supporterNotes)
    .where(and(eq(supporterNotes.organizationId, organizationId), eq(supporterNotes.supporterId, supporterId)))
    .orderBy(desc(supporterNotes.id));
  return limit === undefined ? query : query.limit(limit);
}

export async function findSupporterNoteRow(tx: Executor, organizationId: number, supporterId: number, id: number) {
  const [row] = await tx
    .select()
    .from(supporterNotes)
    .where(
      and(
        eq(supporterNotes.organizationId, organizationId),
        eq(supporterNotes.supporterId, supporterId),
        eq(supporterNotes.id, id),
      ),
    );
  return row;
}

/** Whether the note was there to delete (a concurrent delete may have taken it first). */
export async function deleteSupporterNoteRow(tx: Executor, organizationId: number, id: number): Promise<boolean> {
  const removed = await tx
    .delete(supporterNotes)
    .where(and(eq(supporterNotes.organizationId, organizationId), eq(supporterNotes.id, id)))
    .returning({ id: supporterNotes.id });
  return removed.length > 0;
}

/** Every note about the supporter (their erasure): how many went. */
export async function deleteSupporterNotesOf(tx: Executor, organizationId: number, supporterId: number) {
  const removed = await tx
    .delete(supporterNotes)
    .where(and(eq(supporterNotes.organizationId, organizationId), eq(supporterNotes.supporterId, supporterId)))
    .returning({ id: supporterNotes.id });
  return removed.length;
}

/** An application's name, the author a note it writes is signed with (applications is a reference table). */
export async function findApplicationName(tx: Executor, applicationId: number): Promise<string | undefined> {
  const [row] = await tx
    .select({ name: applications.name })
    .from(applications)
    .where(eq(applications.id, applicationId));
  return row?.name;
}
