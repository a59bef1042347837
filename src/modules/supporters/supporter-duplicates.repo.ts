import { sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";

export type DuplicateReason = "email" | "name_and_postal_code";

export interface DuplicateGroupRow {
  reason: DuplicateReason;
  /** The members' ids, oldest first. */
  ids: number[];
}

/**
 * One page of the organization's live supporters that look like one person: the same email
 * (trimmed, any case), or else the same first and last name (trimmed, any case) and postal code
 * (spaces removed). A supporter grouped by email is left out of the name groups, so the groups are
 * disjoint and each has a distinct newest member, their order (newest first).
 */
export async function listDuplicateGroups(
  tx: Executor,
  organizationId: number,
  page: { limit: number; offset: number },
): Promise<{ count: number; groups: DuplicateGroupRow[] }> {
  // Every table reference is filtered by organization_id: on Citus the whole query runs on one shard.
  const result = await tx.execute(sql`
    with live as (
      select id,
        nullif(lower(trim(email)), '') as email_key,
        case
          when nullif(trim(first_name), '') is not null
            and nullif(trim(last_name), '') is not null
            and nullif(replace(postal_code, ' ', ''), '') is not null
          then json_build_array(lower(trim(first_name)), lower(trim(last_name)), lower(replace(postal_code, ' ', '')))::text
        end as name_key
      from supporters
      where organization_id = ${organizationId} and erase_date is null
    ),
    email_groups as (
      select 'email' as reason, array_agg(id order by id) as ids, max(id) as newest
      from live where email_key is not null
      group by email_key having count(*) >= 2
    ),
    by_email as (select unnest(ids) as id from email_groups),
    name_groups as (
      select 'name_and_postal_code' as reason, array_agg(id order by id) as ids, max(id) as newest
      from live where name_key is not null and id not in (select id from by_email)
      group by name_key having count(*) >= 2
    ),
    all_groups as (select * from email_groups union all select * from name_groups)
    select total.n as count, page.reason, array_to_string(page.ids, ',') as ids
    from (select count(*)::int as n from all_groups) total
    left join (
      select reason, ids, newest from all_groups order by newest desc limit ${page.limit} offset ${page.offset}
    ) page on true
    order by page.newest desc`);
  const rows = (result as unknown as { rows: { count: number; reason: DuplicateReason | null; ids: string | null }[] })
    .rows;
  return {
    count: Number(rows[0]?.count ?? 0),
    groups: rows.flatMap((row) =>
      row.reason && row.ids ? [{ reason: row.reason, ids: row.ids.split(",").map(Number) }] : [],
    ),
  };
}
