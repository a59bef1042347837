import type { Permission } from "../../auth/permissions.js";

/**
 * A link to a document is data too: it opens whatever the document shows. A receipt shows the
 * donation and the donor's name and address; a yearly statement shows the supporter and their
 * donations. So a link is visible only to a reader allowed to read all of that, and null otherwise
 * (the field stays on the wire, as decisions §3 wants one shape).
 */
export const DOCUMENT_LINK_PERMISSIONS: Readonly<Record<string, readonly Permission[]>> = {
  receipt_url: ["donations:read", "supporters:read"],
  certification_url: ["supporters:read", "donations:read"],
};

const LINK_PERMISSIONS = [...new Set(Object.values(DOCUMENT_LINK_PERMISSIONS).flat())];

export const DOCUMENT_LINK_NOTE = "null unless the reader may also read supporters and donations";

export function mayOpenLink(field: string, allows: (permission: Permission) => boolean): boolean {
  return (DOCUMENT_LINK_PERMISSIONS[field] ?? []).every(allows);
}

const MAX_DEPTH = 8;

/**
 * The same value with every document link the permissions do not cover set to null, at any depth
 * (a checkout's embedded donation and supporter included). Unchanged parts are shared, not copied.
 */
export function hideDocumentLinks<T>(value: T, permissions: readonly string[], depth = 0): T {
  if (depth === 0 && LINK_PERMISSIONS.every((permission) => permissions.includes(permission))) return value;
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item) => {
      const hidden = hideDocumentLinks(item, permissions, depth + 1);
      changed ||= hidden !== item;
      return hidden;
    });
    return (changed ? items : value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value; // Buffers, streams, dates
  let copy: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    let next = item;
    if (key in DOCUMENT_LINK_PERMISSIONS) {
      if (item !== null && !mayOpenLink(key, (permission) => permissions.includes(permission))) next = null;
    } else {
      next = hideDocumentLinks(item, permissions, depth + 1);
    }
    if (next !== item) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = next;
    }
  }
  return (copy ?? value) as T;
}
