import { and, arrayContains, eq, ilike, inArray, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  type DateBound,
  dateRangeConditions,
  escapeLike,
  instant,
  listTenantPage,
  type Order,
  orderColumnsOf,
  orderTerms,
  type Page,
  selectTenantRow,
  wireRowOf,
} from "../../db/list-query.js";
import { nextId } from "../../db/next-id.js";
import { supporters } from "../../db/schema.js";
import { selectTenantRowsByIds, tenantRowLocker } from "../../db/tenant-rows.js";
import type { SupporterWire } from "./supporters.schemas.js";
import { SUPPORTER_ORDER_FIELDS } from "./supporters.schemas.js";

export type SupporterRow = typeof supporters.$inferSelect;

/** The one wire mapping of supporters: the SQL that builds it (checkouts embed it) and *ToWire alike. */
export const supporterWireRow = wireRowOf<SupporterWire>({
  id: supporters.id,
  create_date: instant(supporters.createDate),
  update_date: instant(supporters.updateDate),
  image: supporters.image,
  code: supporters.code,
  business_name: supporters.businessName,
  first_name: supporters.firstName,
  last_name: supporters.lastName,
  email: supporters.email,
  phone: supporters.phone,
  mobile: supporters.mobile,
  job: supporters.job,
  sex: supporters.sex,
  date_of_birth: supporters.dateOfBirth,
  place_of_birth: supporters.placeOfBirth,
  ssn: supporters.ssn,
  vat: supporters.vat,
  address: supporters.address,
  address2: supporters.address2,
  city: supporters.city,
  locality: supporters.locality,
  country: supporters.country,
  postal_code: supporters.postalCode,
  certification_url: supporters.certificationUrl,
  privacy: supporters.privacy,
  email_marketing: supporters.emailMarketing,
  phone_marketing: supporters.phoneMarketing,
  sms_marketing: supporters.smsMarketing,
  postal_marketing: supporters.postalMarketing,
  profilation_marketing: supporters.profilationMarketing,
  tags: supporters.tags,
  note: supporters.note,
  erase_date: instant(supporters.eraseDate),
  external_id: supporters.externalId,
});

export interface SupporterFilters {
  q?: string;
  email?: string;
  tag?: string;
  country?: string;
  externalId?: string;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
  updateDateFrom?: DateBound;
  updateDateTo?: DateBound;
}

const orderColumns = orderColumnsOf(supporters, SUPPORTER_ORDER_FIELDS);

/** Matches a supporter by name, business name or email; shared with the checkout search. */
export function supporterTextMatch(pattern: string): SQL | undefined {
  return or(
    ilike(supporters.firstName, pattern),
    ilike(supporters.lastName, pattern),
    ilike(supporters.businessName, pattern),
    ilike(supporters.email, pattern),
  );
}

function conditionsFor(scope: Scope, filters: SupporterFilters): (SQL | undefined)[] {
  return [
    filters.q ? supporterTextMatch(`%${escapeLike(filters.q)}%`) : undefined,
    filters.email !== undefined ? sql`lower(${supporters.email}) = lower(${filters.email})` : undefined,
    filters.tag !== undefined ? arrayContains(supporters.tags, [filters.tag]) : undefined,
    filters.country !== undefined ? eq(supporters.country, filters.country) : undefined,
    filters.externalId !== undefined ? eq(supporters.externalId, filters.externalId) : undefined,
    ...dateRangeConditions(supporters.createDate, filters.createDateFrom, filters.createDateTo, scope.timeZone),
    ...dateRangeConditions(supporters.updateDate, filters.updateDateFrom, filters.updateDateTo, scope.timeZone),
  ];
}

export async function listSupporterRows(
  tx: Executor,
  scope: Scope,
  filters: SupporterFilters,
  order: Order,
  page: Page,
) {
  const query = {
    organizationId: scope.organizationId,
    conditions: conditionsFor(scope, filters),
    order: orderTerms(orderColumns, supporters.id, order),
    page,
  };
  return listTenantPage(tx, supporters, "supporters", query);
}

export function findSupporterRow(tx: Executor, scope: Scope, id: number) {
  return selectTenantRow(tx, supporters, scope.organizationId, id);
}

export type SupporterColumns = Partial<typeof supporters.$inferInsert>;

export async function insertSupporterRow(tx: Executor, scope: Scope, values: SupporterColumns) {
  const [row] = await tx
    .insert(supporters)
    .values({ organizationId: scope.organizationId, ...values })
    .returning();
  if (!row) throw new Error("supporter insert returned nothing");
  await countInserted(tx, scope.organizationId, "supporters");
  return row;
}

async function setSupporterColumns(
  tx: Executor,
  scope: Scope,
  id: number,
  values: { [K in keyof SupporterColumns]: SupporterColumns[K] | SQL },
  condition?: SQL,
) {
  const [row] = await tx
    .update(supporters)
    .set({ ...values, updateDate: sql`now()` })
    .where(and(eq(supporters.organizationId, scope.organizationId), eq(supporters.id, id), condition))
    .returning();
  return row;
}

/**
 * The updated row, or undefined if it no longer exists or was erased meanwhile: an erasure that
 * commits between an edit's read and its write is never undone by the edit (the write waits for the
 * erasure's row lock, then finds the record erased).
 */
export function updateSupporterRow(tx: Executor, scope: Scope, id: number, values: SupporterColumns) {
  return setSupporterColumns(tx, scope, id, values, isNull(supporters.eraseDate));
}

/** Writes the erased values; a supporter erased before keeps the first erase date. */
export function eraseSupporterRow(
  tx: Executor,
  scope: Scope,
  id: number,
  values: SupporterColumns,
  erasedBefore: Date | null,
) {
  return setSupporterColumns(tx, scope, id, { ...values, eraseDate: erasedBefore ?? sql`now()` });
}

export function findSupporterRowsByIds(tx: Executor, organizationId: number, ids: readonly number[]) {
  return selectTenantRowsByIds(tx, supporters, organizationId, ids);
}

export const supporterCode = (id: number) => `SUP-${String(id).padStart(7, "0")}`;

/** The supporter's row, locked until the transaction ends: an edit and an erasure of it never interleave. */
export const lockSupporter = tenantRowLocker(supporters);

export const findSupporter = (tx: Executor, organizationId: number, id: number) =>
  selectTenantRow(tx, supporters, organizationId, id);

/** The organization's oldest live supporter with this email (case-insensitive), locked for update. */
export async function lockSupporterByEmail(tx: Executor, organizationId: number, email: string) {
  const [row] = await tx
    .select()
    .from(supporters)
    .where(
      and(
        eq(supporters.organizationId, organizationId),
        sql`lower(${supporters.email}) = lower(${email})`,
        isNull(supporters.eraseDate),
      ),
    )
    .orderBy(supporters.id)
    .limit(1)
    .for("update");
  return row;
}

/** A new supporter; its id comes from the sequence so that its code is written in the same insert. */
export async function insertSupporter(
  tx: Executor,
  organizationId: number,
  values: Record<string, unknown>,
): Promise<SupporterRow> {
  const id = await nextId(tx, "supporters");
  const [row] = await tx
    .insert(supporters)
    .values({ ...values, organizationId, id, code: supporterCode(id) })
    .returning();
  if (!row) throw new Error("supporter insert returned nothing");
  await countInserted(tx, organizationId, "supporters");
  return row;
}

/** The language of the donor's latest checkout (their emails and documents speak it); the row untouched otherwise. */
export async function setSupporterLocale(tx: Executor, organizationId: number, supporterId: number, locale: string) {
  await tx
    .update(supporters)
    .set({ locale })
    .where(
      and(
        eq(supporters.organizationId, organizationId),
        eq(supporters.id, supporterId),
        sql`${supporters.locale} is distinct from ${locale}`,
      ),
    );
}

/** Sets the supporter's statement link once; the row when it was set now, undefined when it already had one. */
export async function setCertificationUrl(tx: Executor, organizationId: number, supporterId: number, url: string) {
  const [row] = await tx
    .update(supporters)
    .set({ certificationUrl: url })
    .where(
      and(
        eq(supporters.organizationId, organizationId),
        eq(supporters.id, supporterId),
        sql`${supporters.certificationUrl} is null`,
        sql`${supporters.eraseDate} is null`,
      ),
    )
    .returning();
  return row;
}

/**
 * The organization's live supporters an import's batch may match: by external id, or by email
 * (case-insensitive), locked until the batch commits so that a concurrent edit waits for it.
 */
export function lockSupportersForImport(
  tx: Executor,
  organizationId: number,
  externalIds: readonly string[],
  emails: readonly string[],
) {
  const matches = [
    externalIds.length > 0 ? inArray(supporters.externalId, [...externalIds]) : undefined,
    emails.length > 0
      ? inArray(
          sql`lower(${supporters.email})`,
          emails.map((email) => email.toLowerCase()),
        )
      : undefined,
  ].filter((match) => match !== undefined);
  if (matches.length === 0) return Promise.resolve([] as SupporterRow[]);
  return tx
    .select()
    .from(supporters)
    .where(and(eq(supporters.organizationId, organizationId), isNull(supporters.eraseDate), or(...matches)))
    .orderBy(supporters.id)
    .for("update");
}

/** New supporters in one insert (an import's batch), counted in the collection's total. */
export async function insertSupporterRows(tx: Executor, organizationId: number, values: readonly SupporterColumns[]) {
  if (values.length === 0) return [];
  const rows = await tx
    .insert(supporters)
    .values(values.map((each) => ({ ...each, organizationId })))
    .returning();
  await countInserted(tx, organizationId, "supporters", rows.length);
  return rows;
}
