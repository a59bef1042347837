import { AppError } from "../errors/app-error.js";
import type { Permission } from "./permissions.js";

export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/** Managing the installed applications and the organization's settings belongs to members; no application is ever granted it. */
export type MemberPermission =
  | "applications:read"
  | "applications:manage"
  // Reading the payment settings and the audit log: every member, never an application.
  | "organization:read"
  | "organization:manage"
  // The audit log (who did what, from which address): owners and admins, never an application.
  | "organization:audit";

/** Who is asking: an installed application (by bearer token) or a member (by session). */
export type Actor =
  | { kind: "application"; applicationId: number; permissions: string[] }
  | {
      kind: "member";
      userId: number;
      email: string;
      role: Role;
      /** The last time this member proved it was them in the session (src/auth/step-up.ts). */
      verifiedDate?: Date;
    };

/** The actor of a bearer token: the installed application, with what it was granted. */
export function applicationActor(token: { applicationId: number; permissions: string[] }): Actor {
  return { kind: "application", applicationId: token.applicationId, permissions: token.permissions };
}

const WRITE_ROLES: readonly Role[] = ["owner", "admin"];

/** The one permission rule of every surface: applications by their grant, members by their role. */
export function can(actor: Actor, permission: Permission | MemberPermission): boolean {
  if (actor.kind === "application") return actor.permissions.includes(permission);
  return permission.endsWith(":read") || WRITE_ROLES.includes(actor.role);
}

/** Refuses with 403 insufficient_scope unless the actor may; the header is RFC 6750's, for bearer callers. */
export function requirePermission(actor: Actor, permission: Permission | MemberPermission): void {
  if (can(actor, permission)) return;
  throw new AppError(
    "insufficient_scope",
    actor.kind === "application"
      ? `This application was not granted the "${permission}" permission`
      : `Your role (${actor.role}) does not allow "${permission}"`,
    { headers: { "www-authenticate": `Bearer realm="api", error="insufficient_scope", scope="${permission}"` } },
  );
}
