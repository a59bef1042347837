import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Executor } from "./client.js";
import { platformKeys } from "./schema.js";

/** A platform secret by name, created on first use (every process of one database shares it). */
export async function ensurePlatformKey(db: Executor, name: string): Promise<string> {
  await db
    .insert(platformKeys)
    .values({ name, value: randomBytes(32).toString("base64url") })
    .onConflictDoNothing();
  const [row] = await db.select().from(platformKeys).where(eq(platformKeys.name, name));
  if (!row) throw new Error(`platform key ${name} missing after insert`);
  return row.value;
}
