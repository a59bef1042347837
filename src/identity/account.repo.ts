import { asc, eq } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { memberships, users } from "../db/schema.js";

/** The signed-in user's email and password hash (null: none chosen yet), to check their current password. */
export async function findUserCredentials(tx: Executor, userId: number) {
  const [user] = await tx
    .select({ id: users.id, email: users.email, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, userId));
  return user;
}

/** The organizations a user belongs to: where the changes of their account are recorded. */
export async function listOrganizationIdsOfUser(tx: Executor, userId: number): Promise<number[]> {
  const rows = await tx
    .select({ organizationId: memberships.organizationId })
    .from(memberships)
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.organizationId));
  return rows.map((row) => row.organizationId);
}
