import type { FastifyRequest } from "fastify";
import { type Actor, type MemberPermission, type Role, requirePermission } from "../auth/actor.js";
import type { Permission } from "../auth/permissions.js";
import type { Scope } from "../auth/scope.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { requestOrigin } from "../events/origin.js";
import { findMembershipOfUser } from "../modules/members/members.service.js";
import { sessionUser } from "./admin-session.routes.js";

/**
 * Who asks a panel route that is not GraphQL (uploads, CSV and PDF downloads): the member signed in
 * with the panel's cookie session, in the organization the query names (`?organization=<slug>`), with
 * the permission the route needs. Throws not_signed_in, invalid_request, not_a_member or insufficient_scope.
 */
export async function panelMember(
  db: Db,
  request: FastifyRequest,
  permission?: Permission | MemberPermission,
): Promise<{
  actor: Actor;
  scope: Scope;
  membership: NonNullable<Awaited<ReturnType<typeof findMembershipOfUser>>>;
  session: NonNullable<Awaited<ReturnType<typeof sessionUser>>>;
}> {
  const session = await sessionUser(db, request);
  if (!session) throw new AppError("not_signed_in", "Sign in to the admin panel first");
  const { organization } = (request.query ?? {}) as { organization?: unknown };
  if (typeof organization !== "string" || organization === "" || organization.length > 100) {
    throw new AppError("invalid_request", "Name the organization: ?organization=<its slug>", {
      errors: [{ parameter: "organization", message: "must be the organization's slug" }],
    });
  }
  const membership = await findMembershipOfUser(db, session.userId, organization);
  if (!membership) throw new AppError("not_a_member", "You are not a member of that organization");
  const actor: Actor = { kind: "member", userId: session.userId, email: session.email, role: membership.role as Role };
  if (permission) requirePermission(actor, permission);
  const scope: Scope = {
    organizationId: membership.id,
    timeZone: membership.timeZone,
    origin: requestOrigin(request, { type: "user", user_id: session.userId, label: session.email }),
  };
  return { actor, scope, membership, session };
}
