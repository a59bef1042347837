import type { Actor } from "../../auth/actor.js";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { AppError, notFound, type ValidationIssue } from "../../errors/app-error.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { parseId } from "../../http/ids.js";
import { fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import {
  checkSegmentFilters,
  isSegmentCollection,
  SEGMENT_COLLECTIONS,
  type SegmentCollection,
  type SegmentFilter,
  segmentFiltersOf,
} from "./segment-filters.js";
import {
  deleteSegmentRow,
  findSegmentRow,
  insertSegment,
  listSegmentRows,
  lockSegment,
  type SegmentRow,
  updateSegmentRow,
} from "./segments.repo.js";

/** A name's length is counted in characters (code points), as the table's check counts them. */
export const MAX_SEGMENT_NAME_LENGTH = 80;

export type SegmentWire = {
  id: number;
  collection: string;
  name: string;
  filters: SegmentFilter[];
  created_by: number | null;
  create_date: string;
  update_date: string;
};

/** Saved segments are the panel's: its members read and write them, never an application. */
function memberOf(actor: Actor): Extract<Actor, { kind: "member" }> {
  if (actor.kind !== "member") {
    throw new AppError("insufficient_scope", "Saved segments belong to the admin panel's members, not to applications");
  }
  return actor;
}

/** Changed or deleted by its creator, an owner or an admin. */
const mayChange = (actor: Actor, row: SegmentRow) =>
  actor.kind === "member" &&
  (actor.role === "owner" || actor.role === "admin" || (row.createdBy !== null && row.createdBy === actor.userId));

export const segmentToWire = (row: SegmentRow): SegmentWire => ({
  id: row.id,
  collection: row.collection,
  name: row.name,
  filters: segmentFiltersOf(row.collection, row.filters),
  created_by: row.createdBy,
  create_date: row.createDate.toISOString(),
  update_date: row.updateDate.toISOString(),
});

/** A segment as its reader sees it: with whether they may change or delete it. */
const segmentForReader = (row: SegmentRow, actor: Actor) => ({
  ...segmentToWire(row),
  can_change: mayChange(actor, row),
});

function refused(issues: ValidationIssue[]): never {
  const [first] = issues;
  throw new AppError("invalid_request", `Invalid field "${first?.field}": ${first?.message}`, { errors: issues });
}

function checkedCollection(collection: string): SegmentCollection {
  if (isSegmentCollection(collection)) return collection;
  refused([fieldIssue("collection", fieldProblem("one_of", { choices: SEGMENT_COLLECTIONS.join(", ") }))]);
}

function nameIssues(name: string): ValidationIssue[] {
  if (name.length === 0) return [fieldIssue("name", fieldProblem("required"))];
  if ([...name].length > MAX_SEGMENT_NAME_LENGTH) {
    return [fieldIssue("name", fieldProblem("too_long", { max: MAX_SEGMENT_NAME_LENGTH }))];
  }
  return [];
}

function isNameClash(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } })?.cause ?? error;
  return (cause as { code?: string })?.code === "23505";
}

/** The unique index on the name (any case) decides, so two members saving the same name at once get one segment. */
async function naming<T>(work: Promise<T>, collection: string, name: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!isNameClash(error)) throw error;
    throw new AppError("segment_name_taken", `Another segment of ${collection} is named "${name}"`, {
      errors: [fieldIssue("name", fieldProblem("segment_name_taken"))],
    });
  }
}

/** A collection's segments, by name. */
export async function listSegments(db: Db, scope: Scope, actor: Actor, collection: string) {
  memberOf(actor);
  const rows = await listSegmentRows(db, scope.organizationId, checkedCollection(collection));
  return rows.map((row) => segmentForReader(row, actor));
}

/** Any member saves a segment of a table's filters. */
export async function createSegment(
  db: Db,
  scope: Scope,
  actor: Actor,
  input: { collection: string; name: string; filters: readonly SegmentFilter[] },
) {
  const member = memberOf(actor);
  const collection = checkedCollection(input.collection);
  const name = input.name.trim();
  const checked = checkSegmentFilters(collection, input.filters);
  const issues = [...nameIssues(name), ...checked.issues];
  if (issues.length > 0) refused(issues);
  return withEvents(db, async (tx) => {
    const row = await naming(
      insertSegment(tx, {
        organizationId: scope.organizationId,
        collection,
        name,
        filters: checked.filters,
        createdBy: member.userId,
      }),
      collection,
      name,
    );
    await recordEvent(tx, scope, "segment.created", row.id, segmentToWire(row));
    return segmentForReader(row, actor);
  });
}

/** Renames a segment or replaces its filters (what is not given stays); its creator, an owner or an admin. */
export async function updateSegment(
  db: Db,
  scope: Scope,
  actor: Actor,
  rawId: string,
  input: { name?: string | null; filters?: readonly SegmentFilter[] | null },
) {
  memberOf(actor);
  const id = parseId(rawId, "Segment");
  const name = input.name?.trim();
  return withEvents(db, async (tx) => {
    const row = await lockSegment(tx, scope.organizationId, id);
    if (!row) throw notFound("Segment");
    if (!mayChange(actor, row)) {
      throw new AppError("insufficient_role", "Only the segment's creator, an owner or an admin can change it");
    }
    const checked =
      input.filters === undefined || input.filters === null
        ? undefined
        : checkSegmentFilters(row.collection as SegmentCollection, input.filters);
    const issues = [...(name === undefined ? [] : nameIssues(name)), ...(checked?.issues ?? [])];
    if (issues.length > 0) refused(issues);
    const before = segmentToWire(row);
    const changes = {
      ...(name !== undefined && name !== row.name ? { name } : {}),
      ...(checked &&
      JSON.stringify(segmentFiltersOf(row.collection, checked.filters)) !== JSON.stringify(before.filters)
        ? { filters: checked.filters }
        : {}),
    };
    // Nothing to change: nothing written, nothing recorded.
    if (Object.keys(changes).length === 0) return segmentForReader(row, actor);
    const updated = await naming(
      updateSegmentRow(tx, scope.organizationId, id, changes),
      row.collection,
      changes.name ?? row.name,
    );
    if (!updated) throw notFound("Segment");
    await recordEvent(tx, scope, "segment.updated", id, segmentToWire(updated), { before });
    return segmentForReader(updated, actor);
  });
}

/** Deletes a segment and answers it as it was; its creator, an owner or an admin. */
export async function deleteSegment(db: Db, scope: Scope, actor: Actor, rawId: string) {
  memberOf(actor);
  const id = parseId(rawId, "Segment");
  return withEvents(db, async (tx) => {
    const row = await findSegmentRow(tx, scope.organizationId, id);
    if (!row) throw notFound("Segment");
    if (!mayChange(actor, row)) {
      throw new AppError("insufficient_role", "Only the segment's creator, an owner or an admin can delete it");
    }
    if (!(await deleteSegmentRow(tx, scope.organizationId, id))) throw notFound("Segment");
    await recordEvent(tx, scope, "segment.deleted", id, segmentToWire(row));
    return segmentForReader(row, actor);
  });
}
