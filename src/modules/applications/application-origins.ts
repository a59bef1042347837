import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { applications } from "../../db/schema.js";

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
  const rows = await db
    .select({ applicationUrl: applications.applicationUrl, callbackUrls: applications.callbackUrls })
    .from(applications)
    .where(applicationId === undefined ? undefined : eq(applications.id, applicationId));
  return rows.some((row) => declared(row).includes(origin));
}
