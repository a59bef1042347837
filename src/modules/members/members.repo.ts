import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { applications, installations, memberships, organizations, users } from "../../db/schema.js";

/** The one place memberships are read and written: every surface asks here who belongs where. */
export type MembershipRow = typeof memberships.$inferSelect;

export async function findMembership(tx: Executor, organizationId: number, userId: number) {
  const [row] = await tx
    .select()
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  return row;
}

function organizationsOfUser(tx: Executor, userId: number, slug?: string) {
  return tx
    .select({
      id: organizations.id,
      slug: organizations.slug,
      name: organizations.name,
      role: memberships.role,
      currency: organizations.currency,
      timeZone: organizations.timeZone,
      locale: organizations.locale,
    })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(and(eq(memberships.userId, userId), slug === undefined ? undefined : eq(organizations.slug, slug)));
}

/** The organizations a user belongs to, with their role, by name. */
export function listMembershipsOfUser(tx: Executor, userId: number) {
  return organizationsOfUser(tx, userId).orderBy(asc(organizations.name), asc(organizations.slug));
}

/** The user's membership in the organization of that slug, or without one, in the first by slug. */
export async function findMembershipOfUser(tx: Executor, userId: number, slug?: string) {
  const [row] = await organizationsOfUser(tx, userId, slug).orderBy(organizations.slug).limit(1);
  return row;
}

/** Application URLs installed in the organization of that slug, if the user is one of its members. */
export async function listInstalledApplicationUrlsOfMember(tx: Executor, userId: number, slug: string) {
  return tx
    .select({ url: applications.applicationUrl })
    .from(installations)
    .innerJoin(organizations, eq(organizations.id, installations.organizationId))
    .innerJoin(memberships, and(eq(memberships.organizationId, organizations.id), eq(memberships.userId, userId)))
    .innerJoin(applications, eq(applications.id, installations.applicationId))
    .where(eq(organizations.slug, slug));
}

/** Members of an organization (or one of them) with their account, by email. */
export async function listMemberRows(tx: Executor, organizationId: number, userId?: number) {
  return tx
    .select({
      user_id: users.id,
      email: users.email,
      name: users.name,
      role: memberships.role,
      createDate: memberships.createDate,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), userId === undefined ? undefined : eq(users.id, userId)))
    .orderBy(asc(users.email));
}
export type MemberRow = Awaited<ReturnType<typeof listMemberRows>>[number];

/** The addresses of the organization's members with one of these roles (who is told of what needs a decision). */
export async function listMemberEmails(tx: Executor, organizationId: number, roles: readonly string[]) {
  const rows = await tx
    .select({ email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), inArray(memberships.role, [...roles])))
    .orderBy(asc(users.email));
  return rows.map((row) => row.email);
}

export async function countOwners(tx: Executor, organizationId: number): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.role, "owner")));
  return row?.n ?? 0;
}

/** Adds the membership unless it exists; whether it was added. */
export async function insertMembership(tx: Executor, organizationId: number, userId: number, role: string) {
  const added = await tx
    .insert(memberships)
    .values({ organizationId, userId, role })
    .onConflictDoNothing()
    .returning({ userId: memberships.userId });
  return added.length > 0;
}

/** Adds the membership, or gives an existing one the role if a role is given; the resulting role. */
export async function upsertMembership(tx: Executor, organizationId: number, userId: number, role?: string) {
  const [membership] = await tx
    .insert(memberships)
    .values({ organizationId, userId, role: role ?? "member" })
    .onConflictDoUpdate({
      target: [memberships.organizationId, memberships.userId],
      set: { role: role ? role : sql`${memberships.role}` },
    })
    .returning({ role: memberships.role });
  return membership?.role;
}

export async function updateMembershipRole(tx: Executor, organizationId: number, userId: number, role: string) {
  await tx
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
}

export async function deleteMembership(tx: Executor, organizationId: number, userId: number) {
  await tx
    .delete(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
}
