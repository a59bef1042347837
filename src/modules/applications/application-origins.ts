import type { Db } from "../../db/client.js";
import { listInstalledApplicationUrlsOfMember } from "../members/members.repo.js";
import { listApplicationUrls } from "./applications.repo.js";

function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/** Origins an application declares: its application URL's and its callback URLs'. */
function declared(row: { applicationUrl: string; callbackUrls: string[] }): string[] {
  return [row.applicationUrl, ...row.callbackUrls].map(originOf).filter((origin) => origin !== null);
}

/** Whether the given application (or, without one, any registered application) declares the origin. */
export async function isDeclaredOrigin(db: Db, origin: string, applicationId?: number): Promise<boolean> {
  const rows = await listApplicationUrls(db, applicationId);
  return rows.some((row) => declared(row).includes(origin));
}

/** The origins of the applications installed in an organization the user belongs to, for the panel's frames. */
export async function installedOriginsOfMember(db: Db, userId: number, slug: string): Promise<string[]> {
  const rows = await listInstalledApplicationUrlsOfMember(db, userId, slug);
  const origins = new Set<string>();
  for (const { url } of rows) {
    try {
      origins.add(new URL(url).origin);
    } catch {
      // Registration validates URLs; a bad one frames nothing.
    }
  }
  return [...origins].sort();
}
