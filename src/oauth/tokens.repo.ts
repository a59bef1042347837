import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { applications, installations, oauthTokens, organizations } from "../db/schema.js";

export type NewTokenRow = typeof oauthTokens.$inferInsert;

export async function insertToken(tx: Executor, row: NewTokenRow) {
  await tx.insert(oauthTokens).values(row);
}

export async function nextTokenId(tx: Executor): Promise<number> {
  const result = (await tx.execute(sql`select nextval(pg_get_serial_sequence('oauth_tokens', 'id')) as id`)) as {
    rows: { id: string | number }[];
  };
  return Number(result.rows[0]?.id);
}

function prepareActiveAccessToken(tx: Executor) {
  return tx
    .select({
      tokenId: oauthTokens.id,
      organizationId: oauthTokens.organizationId,
      applicationId: oauthTokens.applicationId,
      userId: oauthTokens.userId,
      permissions: applications.permissions,
      scope: oauthTokens.scope,
      timeZone: organizations.timeZone,
      currency: organizations.currency,
      organizationSlug: organizations.slug,
    })
    .from(oauthTokens)
    .innerJoin(organizations, eq(organizations.id, oauthTokens.organizationId))
    .innerJoin(applications, eq(applications.id, oauthTokens.applicationId))
    .innerJoin(
      installations,
      and(
        eq(installations.organizationId, oauthTokens.organizationId),
        eq(installations.applicationId, oauthTokens.applicationId),
      ),
    )
    .where(
      and(
        eq(oauthTokens.accessTokenHash, sql.placeholder("accessTokenHash")),
        isNull(oauthTokens.revokedDate),
        gt(oauthTokens.accessExpiresDate, sql`now()`),
      ),
    )
    .limit(1)
    .prepare("find_active_access_token");
}

/** Built once per database handle (or transaction): every API request runs it. */
const activeAccessTokenQueries = new WeakMap<Executor, ReturnType<typeof prepareActiveAccessToken>>();

/**
 * The access token's organization and application, if it is live and still installed. A named
 * prepared statement with a constant text, so PostgreSQL parses and plans it once per connection.
 */
export async function findActiveAccessToken(tx: Executor, accessTokenHash: string) {
  let query = activeAccessTokenQueries.get(tx);
  if (!query) {
    query = prepareActiveAccessToken(tx);
    activeAccessTokenQueries.set(tx, query);
  }
  const [row] = await query.execute({ accessTokenHash });
  return row;
}

export async function revokeInstallationTokens(tx: Executor, organizationId: number, applicationId: number) {
  const rows = await tx
    .update(oauthTokens)
    .set({ revokedDate: sql`now()` })
    .where(
      and(
        eq(oauthTokens.organizationId, organizationId),
        eq(oauthTokens.applicationId, applicationId),
        isNull(oauthTokens.revokedDate),
      ),
    )
    .returning({ id: oauthTokens.id });
  return rows.length;
}
