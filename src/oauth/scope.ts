import { PERMISSIONS } from "../auth/permissions.js";

/** RFC 6749 §3.3: space-separated names, each counted once. */
export function scopeNames(raw: string): string[] {
  return [...new Set(raw.split(" ").filter(Boolean))];
}

/** What a grant allows: the application's permissions, narrowed to the grant's scope when it has one. */
export function grantedPermissions(scope: readonly string[] | null, applicationPermissions: readonly string[]) {
  return scope === null
    ? [...applicationPermissions]
    : applicationPermissions.filter((permission) => scope.includes(permission));
}

/**
 * The scope of an authorization request, checked against the application's registration; null when
 * none was asked for (the token then carries every permission the application declared).
 */
export function checkRequestedScope(
  raw: string | undefined,
  applicationPermissions: readonly string[],
): { scope: string[] | null } | { error: string } {
  if (raw === undefined) return { scope: null };
  const names = scopeNames(raw);
  if (names.length === 0) return { error: "scope must name at least one permission" };
  for (const name of names) {
    if (!(PERMISSIONS as readonly string[]).includes(name)) return { error: `"${name}" is not a permission` };
    if (!applicationPermissions.includes(name)) {
      return { error: `The application is not registered for the permission "${name}"` };
    }
  }
  return { scope: applicationPermissions.filter((permission) => names.includes(permission)) };
}
