import type { Scope } from "../../auth/scope.js";
import type { Db, Executor } from "../../db/client.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { parseId } from "../../http/ids.js";
import { moveAndDeleteSupporter, sharedStatementYears } from "./supporter-merges.repo.js";
import { insertSupporterNote } from "./supporter-notes.repo.js";
import {
  findSupporterRow,
  lockSupporter,
  type SupporterColumns,
  type SupporterRow,
  updateSupporterRow,
} from "./supporters.repo.js";
import { CONSENT_NAMES, type ConsentName, type SupporterPatch, type SupporterWire } from "./supporters.schemas.js";
import { SUPPORTER_COLUMNS, supporterToWire } from "./supporters.service.js";

/** One consent as each supporter has it, and what the kept one will have: the most recently updated wins. */
export interface ConsentChoice {
  consent: ConsentName;
  kept: boolean | null;
  merged: boolean | null;
  result: boolean | null;
  /** Whose value the result is (null: neither said). */
  from: "kept" | "merged" | null;
}

export interface MergePlan {
  kept: SupporterWire;
  merged: SupporterWire;
  /** The kept supporter as the merge leaves it. */
  result: SupporterWire;
  consents: ConsentChoice[];
  /** What the merged supporter had that the kept one keeps otherwise (kept as a note, so nothing is lost). */
  differences: { field: string; kept: unknown; merged: unknown }[];
}

const isBlank = (value: unknown) =>
  value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The fields that are profile (not consents, not tags): a blank one of the kept supporter takes the merged one's. */
const PROFILE_FIELDS = (Object.keys(SUPPORTER_COLUMNS) as (keyof SupporterPatch)[]).filter(
  (field) => field !== "tags" && !(CONSENT_NAMES as readonly string[]).includes(field),
);

function planOf(kept: SupporterRow, merged: SupporterRow) {
  const keptWire = supporterToWire(kept);
  const mergedWire = supporterToWire(merged);
  const changes: SupporterColumns = {};
  const differences: MergePlan["differences"] = [];
  for (const field of PROFILE_FIELDS) {
    const mine = keptWire[field as keyof SupporterWire];
    const theirs = mergedWire[field as keyof SupporterWire];
    if (isBlank(theirs) || sameValue(mine, theirs)) continue;
    if (isBlank(mine)) Object.assign(changes, { [SUPPORTER_COLUMNS[field]]: theirs });
    else if (field !== "code") differences.push({ field, kept: mine, merged: theirs });
  }
  if (!kept.externalId && merged.externalId) changes.externalId = merged.externalId;
  const tags = [...new Set([...(kept.tags ?? []), ...(merged.tags ?? [])])];
  if (tags.length !== (kept.tags ?? []).length) changes.tags = tags;
  // The most recent wins: the value of the supporter updated last, where it said one.
  const mergedIsNewer = merged.updateDate.getTime() > kept.updateDate.getTime();
  const consents = CONSENT_NAMES.map((consent): ConsentChoice => {
    const mine = (keptWire[consent] ?? null) as boolean | null;
    const theirs = (mergedWire[consent] ?? null) as boolean | null;
    const from =
      mine === null && theirs === null
        ? null
        : theirs === null
          ? "kept"
          : mine === null || (mine !== theirs && mergedIsNewer)
            ? "merged"
            : "kept";
    const result = from === "merged" ? theirs : mine;
    if (from === "merged" && result !== mine) Object.assign(changes, { [SUPPORTER_COLUMNS[consent]]: result });
    return { consent, kept: mine, merged: theirs, result, from };
  });
  return { changes, consents, differences, keptWire, mergedWire };
}

async function loadPair(db: Executor, scope: Scope, rawKept: string, rawMerged: string, lock: boolean) {
  const keptId = parseId(rawKept, "Supporter");
  const mergedId = parseId(rawMerged, "Supporter");
  if (keptId === mergedId) {
    throw new AppError("invalid_request", "A supporter cannot be merged into itself: name two different supporters");
  }
  // Both held, in id order: two merges of the same pair never wait for each other crosswise.
  if (lock)
    for (const id of [keptId, mergedId].sort((a, b) => a - b)) await lockSupporter(db, scope.organizationId, id);
  const [kept, merged] = await Promise.all([
    findSupporterRow(db, scope, keptId),
    findSupporterRow(db, scope, mergedId),
  ]);
  if (!kept || !merged) throw notFound("Supporter");
  if (kept.eraseDate || merged.eraseDate) {
    throw new AppError("supporter_erased", "An erased supporter cannot be merged: their personal data is gone");
  }
  const years = await sharedStatementYears(db, scope.organizationId, kept.id, merged.id);
  if (years.length > 0) {
    throw new AppError(
      "merge_refused",
      `Both supporters have a yearly statement for ${years.join(", ")}: void one of them first, then merge (a donor has one statement a year)`,
    );
  }
  return { kept, merged };
}

/** What merging `rawMerged` into `rawKept` would do, shown before it is confirmed; nothing written. */
export async function previewSupporterMerge(db: Db, scope: Scope, rawKept: string, rawMerged: string) {
  const { kept, merged } = await loadPair(db, scope, rawKept, rawMerged, false);
  const plan = planOf(kept, merged);
  const result = supporterToWire({ ...kept, ...plan.changes } as SupporterRow);
  return {
    kept: plan.keptWire,
    merged: plan.mergedWire,
    result,
    consents: plan.consents,
    differences: plan.differences,
  } satisfies MergePlan;
}

/**
 * Merges one supporter into another: donations, payments (with their donations), checkouts, payment
 * methods, consent records, notes, receipts and emails move to the kept one; its blank fields take the
 * merged one's, tags join, each consent is the most recently updated one's; what differed is kept as a
 * note. The merged supporter is deleted and its id answers 404 with a pointer to the kept one; one
 * `supporter.merged` event (and the audit log's entry) says so.
 */
export async function mergeSupporters(
  db: Db,
  scope: Scope,
  rawKept: string,
  rawMerged: string,
  author: { userId: number | null; name: string },
) {
  return withEvents(db, async (tx) => {
    const { kept, merged } = await loadPair(tx, scope, rawKept, rawMerged, true);
    const plan = planOf(kept, merged);
    await moveAndDeleteSupporter(tx, scope.organizationId, kept.id, merged.id);
    const row =
      Object.keys(plan.changes).length > 0 ? await updateSupporterRow(tx, scope, kept.id, plan.changes) : kept;
    if (!row) throw notFound("Supporter");
    if (plan.differences.length > 0) {
      const lines = plan.differences.map((difference) => `${difference.field}: ${String(difference.merged)}`);
      await insertSupporterNote(tx, {
        organizationId: scope.organizationId,
        supporterId: kept.id,
        authorUserId: author.userId,
        authorName: author.name,
        body: `Merged from supporter ${merged.id} (${merged.code}), who also had:\n${lines.join("\n")}`.slice(0, 5000),
      });
    }
    const supporter = supporterToWire(row);
    await recordEvent(tx, scope, "supporter.merged", kept.id, supporter, {
      before: plan.keptWire,
      also: { merged_id: { before: null, after: merged.id } },
    });
    return { supporter, merged_id: merged.id };
  });
}
