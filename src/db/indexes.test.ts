import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase } from "../../test/helpers/database.js";
import { fakeCheckout, fakeTenant, type Tenant } from "../../test/helpers/factories.js";
import type { Database } from "./client.js";

type PlanNode = { "Node Type": string; "Index Name"?: string; Plans?: PlanNode[] };

/**
 * Every plan node, also those of the plan a Citus coordinator shows for the shard it routes to
 * ("Distributed Query" → "Job" → "Tasks" → "Remote Plan"), where an index is named after its shard.
 */
function nodesOf(value: unknown): PlanNode[] {
  if (Array.isArray(value)) return value.flatMap(nodesOf);
  if (value === null || typeof value !== "object") return [];
  const node = value as Record<string, unknown>;
  const inside = Object.values(node).flatMap(nodesOf);
  if (typeof node["Node Type"] !== "string") return inside;
  const indexName = typeof node["Index Name"] === "string" ? node["Index Name"].replace(/_\d+$/, "") : undefined;
  return [{ ...(node as PlanNode), "Index Name": indexName }, ...inside];
}

// The default order of every list must be served by its (organization_id, create_date, id) index in both
// directions, without a sort: index and ORDER BY directions (and NULLS placement) have to match exactly.
describe("list indexes", () => {
  let database: Database;
  let tenant: Tenant;
  beforeAll(async () => {
    database = await openTestDatabase();
    tenant = await fakeTenant(database.db);
    for (let i = 0; i < 5; i++) await fakeCheckout(database.db, tenant.organizationId);
  });
  afterAll(() => database?.close());

  for (const table of ["checkouts", "donations", "payments", "supporters", "campaigns"]) {
    for (const direction of ["desc", "asc"]) {
      it(`${table} ordered by create_date ${direction}, id ${direction} uses ${table}_create_date_idx`, async () => {
        const nodes = await database.db.transaction(async (tx) => {
          // On a Citus coordinator, the settings below go with the query to the shard's node too.
          await tx.execute(sql`set local citus.propagate_set_commands = 'local'`);
          await tx.execute(sql`set local enable_seqscan = off`);
          await tx.execute(sql`set local enable_sort = off`);
          const result = (await tx.execute(
            sql.raw(
              `explain (format json) select id from ${table} where organization_id = ${tenant.organizationId} ` +
                `order by create_date ${direction}, id ${direction} limit 100 offset 10`,
            ),
          )) as { rows: { "QUERY PLAN": { Plan: PlanNode }[] | string }[] };
          const raw = result.rows[0]?.["QUERY PLAN"];
          const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
          return nodesOf(plan);
        });
        expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
        expect(nodes.map((node) => node["Index Name"])).toContain(`${table}_create_date_idx`);
      });
    }
  }
});
