import { randomBytes } from "node:crypto";
import { ROLES, type Role } from "../../auth/actor.js";
import type { Db, Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { insertUser } from "../../identity/users.repo.js";
import { findUserByEmail, hashPassword, MIN_PASSWORD_LENGTH, normalizeEmail } from "../../identity/users.service.js";
import {
  countOwners,
  deleteMembership,
  findMembershipOfUser,
  insertMembership,
  listMemberRows,
  type MemberRow,
  updateMembershipRole,
} from "./members.repo.js";

/** The user's membership in the organization of that slug, or without one, in the first by slug. */
export { findMembershipOfUser };

export interface MemberWire {
  user_id: number;
  email: string;
  name: string | null;
  role: Role;
  create_date: string;
}

/** Who is acting: a signed-in member of the organization, with their role. */
export interface MemberActor {
  userId: number;
  role: Role;
  /** Who and where, for the change's event. */
  origin?: EventOrigin;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const invalid = (field: string, message: string) =>
  new AppError("invalid_request", `Invalid field "${field}": ${message}`, { errors: [{ field, message }] });

function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw invalid("role", `must be one of ${ROLES.join(", ")}`);
  return role as Role;
}

function requireManager(actor: MemberActor) {
  if (actor.role === "member") {
    throw new AppError("insufficient_role", "Only owners and admins manage the members");
  }
}

function requireOwnerFor(actor: MemberActor, what: string) {
  if (actor.role !== "owner") throw new AppError("insufficient_role", `Only owners can ${what}`);
}

/** A membership as its events keep it (no date: a role change is not a new membership). */
const memberData = (member: MemberWire) => ({ user_id: member.user_id, email: member.email, role: member.role });

const toWire = (row: MemberRow): MemberWire => ({
  user_id: row.user_id,
  email: row.email,
  name: row.name,
  role: row.role as Role,
  create_date: row.createDate.toISOString(),
});

export async function listMembers(db: Db, organizationId: number): Promise<MemberWire[]> {
  return (await listMemberRows(db, organizationId)).map(toWire);
}

async function requireMember(tx: Executor, organizationId: number, userId: number) {
  const [row] = await listMemberRows(tx, organizationId, userId);
  if (!row) throw new AppError("not_found", "Member not found");
  return row;
}

/**
 * Adds a person to the organization. A new account gets the given password, or a temporary one
 * returned once; an existing account (by email) just gains the membership.
 */
export async function addMember(
  db: Db,
  organizationId: number,
  actor: MemberActor,
  input: { email: string; role: string; password?: string | null },
) {
  requireManager(actor);
  const role = checkRole(input.role);
  if (role === "owner") requireOwnerFor(actor, "make someone an owner");
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email) || email.length > 320) throw invalid("email", "must be an email address");
  if (input.password && input.password.length < MIN_PASSWORD_LENGTH) {
    throw invalid("password", `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  return withEvents(db, async (tx) => {
    let user = await findUserByEmail(tx, email);
    let temporaryPassword: string | null = null;
    if (!user) {
      if (!input.password) temporaryPassword = randomBytes(12).toString("base64url");
      const password = input.password || (temporaryPassword as string);
      user = await insertUser(tx, { email, passwordHash: await hashPassword(password) });
    }
    if (!(await insertMembership(tx, organizationId, user.id, role))) {
      throw new AppError("already_member", `${user.email} is already a member of this organization`, {
        errors: [{ field: "email", message: "is already a member" }],
      });
    }
    const member = toWire(await requireMember(tx, organizationId, user.id));
    await recordEvent(tx, { organizationId, origin: actor.origin }, "membership.created", user.id, memberData(member));
    return { member, temporary_password: temporaryPassword };
  });
}

export async function changeMemberRole(
  db: Db,
  organizationId: number,
  actor: MemberActor,
  userId: number,
  newRole: string,
) {
  requireManager(actor);
  const role = checkRole(newRole);
  return withEvents(db, async (tx) => {
    const target = await requireMember(tx, organizationId, userId);
    if (target.role === "owner" || role === "owner") requireOwnerFor(actor, "grant or take away the owner role");
    if (target.role === "owner" && role !== "owner" && (await countOwners(tx, organizationId)) <= 1) {
      throw new AppError("last_owner", "The organization needs at least one owner; make someone else owner first");
    }
    await updateMembershipRole(tx, organizationId, userId, role);
    const member = toWire(await requireMember(tx, organizationId, userId));
    if (target.role !== role) {
      await recordEvent(
        tx,
        { organizationId, origin: actor.origin },
        "membership.updated",
        userId,
        memberData(member),
        {
          before: memberData(toWire(target)),
        },
      );
    }
    return member;
  });
}

export async function removeMember(db: Db, organizationId: number, actor: MemberActor, userId: number) {
  requireManager(actor);
  return withEvents(db, async (tx) => {
    const target = await requireMember(tx, organizationId, userId);
    if (target.role === "owner") {
      requireOwnerFor(actor, "remove an owner");
      if ((await countOwners(tx, organizationId)) <= 1) {
        throw new AppError("last_owner", "The organization needs at least one owner; it cannot lose its last one");
      }
    }
    await deleteMembership(tx, organizationId, userId);
    await recordEvent(
      tx,
      { organizationId, origin: actor.origin },
      "membership.deleted",
      userId,
      memberData(toWire(target)),
    );
    return true;
  });
}
