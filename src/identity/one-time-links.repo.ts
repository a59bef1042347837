import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { userSignInLinks, users } from "../db/schema.js";

export type SignInLinkPurpose = "setup" | "reset";

export async function insertSignInLink(
  tx: Executor,
  values: { userId: number; tokenHash: string; purpose: SignInLinkPurpose; lifetimeSeconds: number },
) {
  await tx.insert(userSignInLinks).values({
    userId: values.userId,
    tokenHash: values.tokenHash,
    purpose: values.purpose,
    expiresDate: sql`now() + make_interval(secs => ${values.lifetimeSeconds})`,
  });
}

/** A new link replaces the user's earlier unused ones: they expire now, so only the latest one printed works. */
export async function expireUnusedSignInLinks(tx: Executor, userId: number) {
  await tx
    .update(userSignInLinks)
    .set({ expiresDate: sql`least(${userSignInLinks.expiresDate}, now())` })
    .where(and(eq(userSignInLinks.userId, userId), isNull(userSignInLinks.usedDate)));
}

/** A link by its hash, whatever its state, with its user's email; `live` says whether it can still be used. */
export async function findSignInLink(tx: Executor, tokenHash: string) {
  const [row] = await tx
    .select({
      userId: userSignInLinks.userId,
      purpose: userSignInLinks.purpose,
      email: users.email,
      live: sql<boolean>`(${userSignInLinks.usedDate} is null and ${userSignInLinks.expiresDate} > now())`,
    })
    .from(userSignInLinks)
    .innerJoin(users, eq(users.id, userSignInLinks.userId))
    .where(eq(userSignInLinks.tokenHash, tokenHash))
    .limit(1);
  return row;
}

/** Uses the link up if it is still live, in one statement, so two concurrent uses cannot both succeed. */
export async function consumeSignInLink(tx: Executor, tokenHash: string) {
  const [row] = await tx
    .update(userSignInLinks)
    .set({ usedDate: sql`now()` })
    .where(
      and(
        eq(userSignInLinks.tokenHash, tokenHash),
        isNull(userSignInLinks.usedDate),
        gt(userSignInLinks.expiresDate, sql`now()`),
      ),
    )
    .returning({ userId: userSignInLinks.userId, purpose: userSignInLinks.purpose });
  return row;
}

export async function setUserPasswordHash(tx: Executor, userId: number, passwordHash: string) {
  await tx.update(users).set({ passwordHash, updateDate: sql`now()` }).where(eq(users.id, userId));
}
