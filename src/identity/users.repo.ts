import { eq, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { organizations, users } from "../db/schema.js";

/** Candidates for an email through the unique index on lower(email); the caller decides which one matches. */
export async function findUserRowByLowerEmail(tx: Executor, email: string) {
  const [user] = await tx.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
  return user;
}

export async function findUserProfile(tx: Executor, userId: number) {
  const [user] = await tx
    .select({ id: users.id, email: users.email, name: users.name })
    .from(users)
    .where(eq(users.id, userId));
  return user;
}

/** A null password hash: the user chooses one through a one-time link (`donata setup`). */
export async function insertUser(
  tx: Executor,
  values: { email: string; passwordHash: string | null; name?: string | null },
) {
  const [user] = await tx.insert(users).values(values).returning();
  if (!user) throw new Error("user insert returned nothing");
  return user;
}

/** The language the user chose for the panel (null: none chosen) and their organization's default. */
export async function findUserLocales(tx: Executor, userId: number, organizationId: number) {
  const [user] = await tx.select({ locale: users.locale }).from(users).where(eq(users.id, userId));
  const [organization] = await tx
    .select({ locale: organizations.locale })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  return user && organization ? { locale: user.locale, organizationLocale: organization.locale } : undefined;
}

export async function setUserLocale(tx: Executor, userId: number, locale: string | null) {
  await tx.update(users).set({ locale, updateDate: sql`now()` }).where(eq(users.id, userId));
}

/** The language the user chose (the switcher of a sign-in or panel page), or null: negotiated per request. */
export async function findUserLocale(tx: Executor, userId: number): Promise<string | null | undefined> {
  const [user] = await tx.select({ locale: users.locale }).from(users).where(eq(users.id, userId));
  return user?.locale;
}
