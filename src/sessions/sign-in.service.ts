import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { loginFailures, users } from "../db/schema.js";
import { AppError } from "../http/errors.js";
import { hashPassword, verifyPassword } from "../modules/users/users.service.js";

const WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_ACCOUNT = 5;
export const MAX_FAILURES_PER_ADDRESS = 30;

// Verified against when the email is unknown, so both cases cost the same argon2 work.
let dummyHash: Promise<string> | undefined;

export const INVALID_CREDENTIALS = "The email or password is incorrect.";

async function failuresOf(db: Db, key: string): Promise<number> {
  const [row] = await db
    .select({
      count: sql<number>`case when ${loginFailures.windowStartDate} > now() - make_interval(secs => ${WINDOW_SECONDS}) then ${loginFailures.count} else 0 end`,
    })
    .from(loginFailures)
    .where(eq(loginFailures.key, key));
  return Number(row?.count ?? 0);
}

async function recordFailure(db: Db, key: string) {
  await db
    .insert(loginFailures)
    .values({ key, count: 1, windowStartDate: sql`now()` })
    .onConflictDoUpdate({
      target: loginFailures.key,
      set: {
        count: sql`case when ${loginFailures.windowStartDate} > now() - make_interval(secs => ${WINDOW_SECONDS}) then ${loginFailures.count} + 1 else 1 end`,
        windowStartDate: sql`case when ${loginFailures.windowStartDate} > now() - make_interval(secs => ${WINDOW_SECONDS}) then ${loginFailures.windowStartDate} else now() end`,
      },
    });
}

/**
 * Checks an email and password. Unknown email and wrong password read the same; repeated
 * failures lock the account and the client address out for a window.
 */
export async function signIn(db: Db, input: { email: string; password: string; address: string }) {
  const accountKey = `account:${input.email.trim().toLowerCase()}`;
  const addressKey = `address:${input.address}`;
  const [accountFailures, addressFailures] = await Promise.all([
    failuresOf(db, accountKey),
    failuresOf(db, addressKey),
  ]);
  if (accountFailures >= MAX_FAILURES_PER_ACCOUNT || addressFailures >= MAX_FAILURES_PER_ADDRESS) {
    throw new AppError("too_many_attempts", 429, "Too many failed sign-in attempts. Try again in 15 minutes.");
  }
  const [user] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = lower(${input.email.trim()})`)
    .limit(1);
  dummyHash ??= hashPassword("a password nobody has");
  const valid = await verifyPassword(user?.passwordHash ?? (await dummyHash), input.password);
  if (!user || !valid) {
    await recordFailure(db, accountKey);
    await recordFailure(db, addressKey);
    throw new AppError("invalid_credentials", 401, INVALID_CREDENTIALS);
  }
  await db.delete(loginFailures).where(eq(loginFailures.key, accountKey));
  return user;
}
