import { type Actor, requirePermission } from "../../auth/actor.js";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { parseId } from "../../http/ids.js";
import { fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { findUserProfile } from "../../identity/users.repo.js";
import {
  deleteSupporterNoteRow,
  findApplicationName,
  findSupporterNoteRow,
  insertSupporterNote,
  listSupporterNoteRows,
  type SupporterNoteRow,
} from "./supporter-notes.repo.js";
import { findSupporterRow, lockSupporter } from "./supporters.repo.js";

/** A note's length is counted in characters (code points), as the table's check counts them. */
export const MAX_NOTE_LENGTH = 5000;
export const MAX_NOTES_LISTED = 500;

export interface SupporterNoteWire {
  id: number;
  supporter_id: number;
  author_user_id: number | null;
  author_name: string;
  body: string;
  create_date: string;
  /** Whether the reader may delete it: its author, an owner or an admin. */
  can_delete: boolean;
}

const mayDelete = (actor: Actor, row: SupporterNoteRow) =>
  actor.kind === "member" &&
  (actor.role === "owner" ||
    actor.role === "admin" ||
    (row.authorUserId !== null && row.authorUserId === actor.userId));

export function supporterNoteToWire(row: SupporterNoteRow, actor: Actor): SupporterNoteWire {
  return {
    id: row.id,
    supporter_id: row.supporterId,
    author_user_id: row.authorUserId,
    author_name: row.authorName,
    body: row.body,
    create_date: row.createDate.toISOString(),
    can_delete: mayDelete(actor, row),
  };
}

/** What an event of a note keeps: who wrote it about whom, never its words (they may be personal). */
const noteEventData = (row: SupporterNoteRow) => ({
  note_id: row.id,
  supporter_id: row.supporterId,
  author_user_id: row.authorUserId,
  author_name: row.authorName,
});

/** The supporter's notes, newest first; another organization's supporter has none. */
export async function listSupporterNotes(db: Db, scope: Scope, actor: Actor, supporterId: number, limit = 100) {
  const rows = await listSupporterNoteRows(
    db,
    scope.organizationId,
    supporterId,
    Math.min(Math.max(1, limit), MAX_NOTES_LISTED),
  );
  return rows.map((row) => supporterNoteToWire(row, actor));
}

function checkedBody(body: string): string {
  const text = body.trim();
  if (text.length === 0) {
    throw new AppError("invalid_request", "A note cannot be empty", {
      errors: [fieldIssue("body", fieldProblem("required"))],
    });
  }
  if ([...text].length > MAX_NOTE_LENGTH) {
    throw new AppError("invalid_request", `A note has at most ${MAX_NOTE_LENGTH} characters`, {
      errors: [fieldIssue("body", fieldProblem("too_long", { max: MAX_NOTE_LENGTH }))],
    });
  }
  return text;
}

/** Who signs what an actor writes: a member by name (else email), an application by its name. */
export async function authorOf(db: Db, actor: Actor): Promise<{ authorUserId: number | null; authorName: string }> {
  if (actor.kind === "member") {
    const user = await findUserProfile(db, actor.userId);
    return { authorUserId: actor.userId, authorName: user?.name?.trim() || user?.email || actor.email };
  }
  const name = await findApplicationName(db, actor.applicationId);
  return { authorUserId: null, authorName: name ?? `application ${actor.applicationId}` };
}

/** Any member may write a note; an application needs supporters:write. An erased supporter takes none. */
export async function addSupporterNote(db: Db, scope: Scope, actor: Actor, rawSupporterId: string, body: string) {
  if (actor.kind === "application") requirePermission(actor, "supporters:write");
  const supporterId = parseId(rawSupporterId, "Supporter");
  const text = checkedBody(body);
  const author = await authorOf(db, actor);
  return withEvents(db, async (tx) => {
    // Held against an erasure, which deletes the notes: a note never outlives it.
    await lockSupporter(tx, scope.organizationId, supporterId);
    const supporter = await findSupporterRow(tx, scope, supporterId);
    if (!supporter) throw notFound("Supporter");
    if (supporter.eraseDate) {
      throw new AppError("supporter_erased", "This supporter's personal data was erased; notes cannot be added");
    }
    const row = await insertSupporterNote(tx, {
      organizationId: scope.organizationId,
      supporterId,
      ...author,
      body: text,
    });
    await recordEvent(tx, scope, "supporter_note.created", supporterId, noteEventData(row));
    return supporterNoteToWire(row, actor);
  });
}

/** Deleted by its author, an owner or an admin, in the panel (never by an application). */
export async function deleteSupporterNote(
  db: Db,
  scope: Scope,
  actor: Actor,
  rawSupporterId: string,
  rawNoteId: string,
) {
  if (actor.kind !== "member") {
    throw new AppError("insufficient_scope", "Notes are deleted by members in the admin panel, not by applications");
  }
  const supporterId = parseId(rawSupporterId, "Supporter");
  const noteId = parseId(rawNoteId, "Note");
  return withEvents(db, async (tx) => {
    const supporter = await findSupporterRow(tx, scope, supporterId);
    if (!supporter) throw notFound("Supporter");
    const row = await findSupporterNoteRow(tx, scope.organizationId, supporterId, noteId);
    if (!row) throw notFound("Note");
    if (!mayDelete(actor, row)) {
      throw new AppError("insufficient_role", "Only the note's author, an owner or an admin can delete it");
    }
    if (!(await deleteSupporterNoteRow(tx, scope.organizationId, row.id))) throw notFound("Note");
    await recordEvent(tx, scope, "supporter_note.deleted", supporterId, noteEventData(row));
    return supporterNoteToWire(row, actor);
  });
}
