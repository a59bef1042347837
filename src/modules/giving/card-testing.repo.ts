import { and, count, eq, gte } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { checkoutAttempts, checkoutProtection, users } from "../../db/schema.js";

type ProtectionValues = Partial<Omit<typeof checkoutProtection.$inferInsert, "organizationId" | "updateDate">>;

/** Writes an organization's protection row, created on first use; its update date is now. */
export async function upsertProtection(db: Executor, organizationId: number, values: ProtectionValues) {
  await db
    .insert(checkoutProtection)
    .values({ organizationId, ...values })
    // The time as a value: Citus takes no volatile function in the DO UPDATE of a distributed table.
    .onConflictDoUpdate({ target: checkoutProtection.organizationId, set: { ...values, updateDate: new Date() } });
}

/** The protection row and the email of the user who last changed it. */
export async function findProtection(db: Executor, organizationId: number) {
  const [row] = await db
    .select({ protection: checkoutProtection, email: users.email })
    .from(checkoutProtection)
    .leftJoin(users, eq(users.id, checkoutProtection.changedByUserId))
    .where(eq(checkoutProtection.organizationId, organizationId));
  return row;
}

export async function countDeclinesSince(db: Executor, organizationId: number, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(checkoutAttempts)
    .where(
      and(
        eq(checkoutAttempts.organizationId, organizationId),
        eq(checkoutAttempts.state, "DECLINED"),
        gte(checkoutAttempts.createDate, since),
      ),
    );
  return Number(row?.n ?? 0);
}
