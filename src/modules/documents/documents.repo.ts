import { and, asc, eq, gte, inArray, isNotNull, lt, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import {
  campaigns,
  donations,
  organizations,
  paymentMethods,
  payments,
  receipts,
  supporters,
} from "../../db/schema.js";
import { methodOfPayment } from "../payments/payments.repo.js";
import type { DocumentKind } from "./document-links.js";

/** The organization of a document's record, found by id alone (ids are unique platform-wide). */
export async function findDocumentOrganizationId(db: Executor, kind: DocumentKind, id: number) {
  const table = kind === "receipt" ? donations : kind === "statement" ? supporters : receipts;
  const [row] = await db.select({ organizationId: table.organizationId }).from(table).where(eq(table.id, id)).limit(1);
  return row;
}

/** A receipt's donation with its organization, supporter, campaign title and payment method label. */
export async function findReceiptDonation(db: Executor, organizationId: number, donationId: number) {
  const [row] = await db
    .select({
      organization: organizations,
      supporter: supporters,
      donation: donations,
      campaignTitle: campaigns.title,
      donationMethodLabel: paymentMethods.label,
      donationMethodProcessor: paymentMethods.processor,
    })
    .from(donations)
    .innerJoin(organizations, eq(organizations.id, donations.organizationId))
    .innerJoin(
      supporters,
      and(eq(supporters.organizationId, donations.organizationId), eq(supporters.id, donations.supporterId)),
    )
    .innerJoin(
      campaigns,
      and(eq(campaigns.organizationId, donations.organizationId), eq(campaigns.id, donations.campaignId)),
    )
    .leftJoin(
      paymentMethods,
      and(
        eq(paymentMethods.organizationId, donations.organizationId),
        eq(paymentMethods.id, donations.paymentMethodId),
      ),
    )
    .where(and(eq(donations.organizationId, organizationId), eq(donations.id, donationId)));
  return row;
}

/** A donation's payments received (refunded ones too), oldest first, with their method label. */
export function listReceiptPayments(db: Executor, organizationId: number, donationId: number) {
  return db
    .select({
      id: payments.id,
      state: payments.state,
      amount: payments.amount,
      amountRefunded: payments.amountRefunded,
      currency: payments.currency,
      paymentDate: payments.paymentDate,
      methodLabel: paymentMethods.label,
      methodProcessor: paymentMethods.processor,
    })
    .from(payments)
    .leftJoin(paymentMethods, methodOfPayment)
    .where(
      and(
        eq(payments.organizationId, organizationId),
        eq(payments.donationId, donationId),
        inArray(payments.state, ["PAID", "REFUNDED"]),
      ),
    )
    .orderBy(asc(payments.paymentDate), asc(payments.id));
}

export async function findStatementSupporter(db: Executor, organizationId: number, supporterId: number) {
  const [row] = await db
    .select({ organization: organizations, supporter: supporters })
    .from(supporters)
    .innerJoin(organizations, eq(organizations.id, supporters.organizationId))
    .where(and(eq(supporters.organizationId, organizationId), eq(supporters.id, supporterId)));
  return row;
}

/** A supporter's received payments: PAID, with a payment date; never test payments (no money moved). */
const received = (organizationId: number, supporterId: number) =>
  and(
    eq(payments.organizationId, organizationId),
    eq(donations.supporterId, supporterId),
    eq(payments.state, "PAID"),
    eq(payments.test, false),
    isNotNull(payments.paymentDate),
  );

const donationOfPayment = and(
  eq(donations.organizationId, payments.organizationId),
  eq(donations.id, payments.donationId),
);

/** The calendar years (in the time zone) in which the supporter's payments were received. */
export async function listStatementYears(db: Executor, organizationId: number, supporterId: number, timeZone: string) {
  const localYear = sql<number>`extract(year from ${payments.paymentDate} at time zone ${timeZone}::text)::int`;
  const rows = await db
    .selectDistinct({ year: localYear })
    .from(payments)
    .innerJoin(donations, donationOfPayment)
    .where(received(organizationId, supporterId));
  return rows.map((row) => Number(row.year));
}

/** The first instant of a calendar year in a time zone, computed by the database's time zone rules. */
const startOfYear = (year: number, timeZone: string) =>
  sql`(make_timestamp(${year}::int, 1, 1, 0, 0, 0) at time zone ${timeZone}::text)`;

/** The supporter's payments received in one calendar year of the time zone, oldest first. */
export function listStatementPayments(
  db: Executor,
  organizationId: number,
  supporterId: number,
  year: number,
  timeZone: string,
) {
  return db
    .select({
      id: payments.id,
      paymentDate: payments.paymentDate,
      // What the donor gave and kept given: a partial refund is not a donation.
      // A lost dispute took its amount back through the donor's bank.
      amount:
        sql<number>`greatest(${payments.amount} - ${payments.amountRefunded} - case when ${payments.disputeStatus} = 'lost' then coalesce(${payments.disputeAmount}, ${payments.amount}) else 0 end, 0)`.mapWith(
          Number,
        ),
      currency: payments.currency,
      donationCode: donations.code,
      campaignTitle: campaigns.title,
      methodLabel: paymentMethods.label,
      processor: paymentMethods.processor,
    })
    .from(payments)
    .innerJoin(donations, donationOfPayment)
    .innerJoin(
      campaigns,
      and(eq(campaigns.organizationId, donations.organizationId), eq(campaigns.id, donations.campaignId)),
    )
    .leftJoin(
      paymentMethods,
      and(eq(paymentMethods.organizationId, payments.organizationId), eq(paymentMethods.id, payments.paymentMethodId)),
    )
    .where(
      and(
        received(organizationId, supporterId),
        gte(payments.paymentDate, startOfYear(year, timeZone)),
        lt(payments.paymentDate, startOfYear(year + 1, timeZone)),
      ),
    )
    .orderBy(asc(payments.paymentDate), asc(payments.id));
}
