import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { selectTenantRow } from "../../db/list-query.js";
import { nextId } from "../../db/next-id.js";
import { campaigns, checkoutAttempts, organizations } from "../../db/schema.js";
import { tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";

export type AttemptRow = typeof checkoutAttempts.$inferSelect;
export type OrganizationRow = typeof organizations.$inferSelect;

/**
 * The organization and campaign behind a public donation page or API call, by their slugs: the
 * organization first, then its campaign (one shard on a cluster, where a join on the slug would
 * look at every shard).
 */
export async function findCampaignBySlugs(db: Executor, organizationSlug: string, campaignSlug: string) {
  const [organization] = await db.select().from(organizations).where(eq(organizations.slug, organizationSlug));
  if (!organization) return undefined;
  const [campaign] = await db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.organizationId, organization.id), eq(campaigns.slug, campaignSlug)));
  return campaign ? { organization, campaign } : undefined;
}

export async function findOrganizationIdBySlug(db: Executor, organizationSlug: string) {
  const [row] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.slug, organizationSlug));
  return row;
}

export async function findOrganizationCurrency(db: Executor, organizationId: number) {
  const [row] = await db
    .select({ currency: organizations.currency })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  return row;
}

export const findCampaign = (tx: Executor, organizationId: number, campaignId: number) =>
  selectTenantRow(tx, campaigns, organizationId, campaignId);

export async function findCampaignWithOrganization(tx: Executor, organizationId: number, campaignId: number) {
  const [row] = await tx
    .select({ campaign: campaigns, organization: organizations })
    .from(campaigns)
    .innerJoin(organizations, eq(organizations.id, campaigns.organizationId))
    .where(and(eq(campaigns.organizationId, organizationId), eq(campaigns.id, campaignId)));
  return row;
}

const attemptIs = (organizationId: number, attemptId: number) =>
  and(eq(checkoutAttempts.organizationId, organizationId), eq(checkoutAttempts.id, attemptId));

/** The checkout's attempt being charged, if any, locked (one checkout never has two in flight). */
export async function lockPendingAttempt(tx: Executor, organizationId: number, checkoutId: number) {
  const [row] = await tx
    .select()
    .from(checkoutAttempts)
    .where(
      and(
        eq(checkoutAttempts.organizationId, organizationId),
        eq(checkoutAttempts.checkoutId, checkoutId),
        eq(checkoutAttempts.state, "PENDING"),
      ),
    )
    .limit(1)
    .for("update");
  return row;
}

/** Whether this request (by its Idempotency-Key) has an attempt still PENDING on the checkout: a resumed completion. */
export async function hasPendingAttemptForRequest(
  db: Executor,
  organizationId: number,
  checkoutId: number,
  requestKey: string,
) {
  const [row] = await db
    .select({ id: checkoutAttempts.id })
    .from(checkoutAttempts)
    .where(
      and(
        eq(checkoutAttempts.organizationId, organizationId),
        eq(checkoutAttempts.checkoutId, checkoutId),
        eq(checkoutAttempts.state, "PENDING"),
        eq(checkoutAttempts.requestKey, requestKey),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/** An attempt's id, taken first so that its processor key can be derived from it in the insert. */
export const nextAttemptId = (tx: Executor) => nextId(tx, "checkout_attempts");

export async function insertCheckoutAttempt(tx: Executor, values: typeof checkoutAttempts.$inferInsert) {
  const [row] = await tx.insert(checkoutAttempts).values(values).returning();
  if (!row) throw new Error("attempt insert returned nothing");
  return row;
}

export async function findAttemptCheckoutId(tx: Executor, organizationId: number, attemptId: number) {
  const [row] = await tx
    .select({ checkoutId: checkoutAttempts.checkoutId })
    .from(checkoutAttempts)
    .where(attemptIs(organizationId, attemptId));
  return row;
}

export const lockAttempt = tenantRowLocker(checkoutAttempts);

/** Settles an attempt (DECLINED or SUCCEEDED, the donor's details forgotten); its update date is now. */
export const updateAttempt = tenantRowUpdater(checkoutAttempts);

/** An attempt the processor never received: ABANDONED, unless it was settled meanwhile. */
export async function abandonPendingAttempt(db: Executor, organizationId: number, attemptId: number) {
  await db
    .update(checkoutAttempts)
    .set({ state: "ABANDONED", gift: null, updateDate: sql`now()` })
    .where(and(attemptIs(organizationId, attemptId), eq(checkoutAttempts.state, "PENDING")));
}

/** Attempts PENDING since before the cutoff (every organization), oldest first. */
export function listStalePendingAttempts(db: Executor, cutoff: Date, limit: number) {
  return db
    .select()
    .from(checkoutAttempts)
    .where(and(eq(checkoutAttempts.state, "PENDING"), lte(checkoutAttempts.updateDate, cutoff)))
    .orderBy(asc(checkoutAttempts.updateDate))
    .limit(limit);
}

/** An attempt by its charge's key; in one organization when it is known (one shard on a cluster). */
export async function findAttemptByIdempotencyKey(db: Executor, idempotencyKey: string, organizationId?: number) {
  const [row] = await db
    .select({
      organizationId: checkoutAttempts.organizationId,
      id: checkoutAttempts.id,
      processor: checkoutAttempts.processor,
    })
    .from(checkoutAttempts)
    .where(
      and(
        eq(checkoutAttempts.idempotencyKey, idempotencyKey),
        organizationId === undefined ? undefined : eq(checkoutAttempts.organizationId, organizationId),
      ),
    );
  return row;
}
