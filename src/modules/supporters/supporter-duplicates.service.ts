import { Type } from "typebox";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { validateAgainst } from "../../http/validate.js";
import { type DuplicateReason, listDuplicateGroups } from "./supporter-duplicates.repo.js";
import { findSupporterRowsByIds } from "./supporters.repo.js";
import type { SupporterWire } from "./supporters.schemas.js";
import { supporterToWire } from "./supporters.service.js";

export const DEFAULT_DUPLICATES_LIMIT = 50;
export const MAX_DUPLICATES_LIMIT = 200;

export const SupporterDuplicatesQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: MAX_DUPLICATES_LIMIT, default: DEFAULT_DUPLICATES_LIMIT }),
    offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
  },
  { additionalProperties: false },
);

export interface DuplicateGroupWire {
  reason: DuplicateReason;
  supporters: SupporterWire[];
}

/** Groups of live supporters who look like one person, their newest member's first; merging them comes later. */
export async function listSupporterDuplicates(
  db: Db,
  scope: Scope,
  args: { limit?: number | null; offset?: number | null },
): Promise<{ count: number; items: DuplicateGroupWire[] }> {
  const page = validateAgainst<{ limit?: number; offset?: number }>(SupporterDuplicatesQuery, args, "parameter");
  const { count, groups } = await listDuplicateGroups(db, scope.organizationId, {
    limit: page.limit ?? DEFAULT_DUPLICATES_LIMIT,
    offset: page.offset ?? 0,
  });
  const rows = await findSupporterRowsByIds(
    db,
    scope.organizationId,
    groups.flatMap((group) => group.ids),
  );
  const byId = new Map(rows.map((row) => [row.id, supporterToWire(row)]));
  const items = groups.map((group) => ({
    reason: group.reason,
    // A supporter erased between the two reads drops out of its group.
    supporters: group.ids.flatMap((id) => {
      const supporter = byId.get(id);
      return supporter && supporter.erase_date === null ? [supporter] : [];
    }),
  }));
  return { count, items };
}
