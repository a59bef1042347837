import type { Role } from "../../auth/actor.js";
import type { Db } from "../../db/client.js";
import type { EventOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { fieldProblem } from "../../i18n/field-problems.js";
import { findUserProfile, insertUser } from "../../identity/users.repo.js";
import {
  findUserByEmail,
  hashPassword,
  invalidField,
  MIN_PASSWORD_LENGTH,
  requireEmailAddress,
} from "../../identity/users.service.js";
import { listMemberRows, listMembershipsOfUser, upsertMembership } from "../members/members.repo.js";
import { requireOrganization } from "../organizations/organizations.service.js";

export interface NewUser {
  email: string;
  password?: string;
  organization?: string;
  role?: Role;
}

/**
 * Creates the user, or finds the existing one by email, and adds the membership if asked,
 * so one person can belong to several organizations.
 */
export async function createUser(db: Db, input: NewUser, origin?: EventOrigin) {
  const email = requireEmailAddress(input.email);
  if (input.role && !input.organization) throw invalidField("role", fieldProblem("role_needs_organization"));
  return withEvents(db, async (tx) => {
    const organization = input.organization ? await requireOrganization(tx, input.organization) : undefined;
    let user = await findUserByEmail(tx, email);
    const created = !user;
    if (!user) {
      if (!input.password || input.password.length < MIN_PASSWORD_LENGTH) {
        throw invalidField("password", fieldProblem("too_short", { min: MIN_PASSWORD_LENGTH }));
      }
      user = await insertUser(tx, { email, passwordHash: await hashPassword(input.password) });
    }
    let role: Role | undefined;
    if (organization) {
      const [before] = await listMemberRows(tx, organization.id, user.id);
      // An existing member keeps their role unless one is given: adding someone never demotes them.
      role = (await upsertMembership(tx, organization.id, user.id, input.role)) as Role | undefined;
      const member = { user_id: user.id, email: user.email, role };
      const scope = { organizationId: organization.id, origin };
      if (!before) await recordEvent(tx, scope, "membership.created", user.id, member);
      else if (before.role !== role) {
        await recordEvent(tx, scope, "membership.updated", user.id, member, {
          before: { ...member, role: before.role },
        });
      }
    }
    return {
      id: user.id,
      email: user.email,
      created,
      organization: organization?.slug ?? null,
      role: role ?? null,
    };
  });
}

/** A user and the organizations they belong to (by name), as the admin panel's session shows them. */
export async function userWithOrganizations(db: Db, userId: number) {
  const user = await findUserProfile(db, userId);
  if (!user) return undefined;
  const rows = await listMembershipsOfUser(db, userId);
  return {
    user,
    organizations: rows.map((row) => ({
      slug: row.slug,
      name: row.name,
      role: row.role,
      currency: row.currency,
      time_zone: row.timeZone,
    })),
  };
}
