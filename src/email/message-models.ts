import type { Executor } from "../db/client.js";
import { findDonationForEmail } from "../modules/donations/donation-emails.repo.js";
import { portalPath } from "../modules/donor-portal/donor-session.js";
import { findPaymentRowsByIds } from "../modules/payments/payments.repo.js";
import type { SupporterRow } from "../modules/supporters/supporters.repo.js";
import { fromCents, toCents } from "../payments/money.js";
import { type BaseModel, loadBaseModel } from "./render.js";

/**
 * What the donor-facing messages share: the donation a message is about, read again at delivery
 * (null when it is gone, or the supporter was erased or has no address any more: nothing is sent),
 * and the names and links the templates show.
 */

/** `one_off`, `monthly` or `yearly`: the catalog keys `frequency.<key>` name them. */
export type FrequencyKey = "one_off" | "monthly" | "yearly";

export const frequencyKey = (frequency: number | null): FrequencyKey =>
  frequency === 12 ? "monthly" : frequency === 1 ? "yearly" : "one_off";

/** The name a message greets the donor by (first name, else the business), or null for a plain greeting. */
export function donorFirstName(supporter: Pick<SupporterRow, "firstName" | "businessName">): string | null {
  return supporter.firstName?.trim() || supporter.businessName?.trim() || null;
}

/** The donor's full name as the organization's notices show it, or their email. */
export function donorFullName(
  supporter: Pick<SupporterRow, "firstName" | "lastName" | "businessName" | "email" | "eraseDate">,
): string {
  if (supporter.eraseDate) return "—";
  const person = [supporter.firstName, supporter.lastName].filter(Boolean).join(" ");
  return [supporter.businessName, person].filter(Boolean).join(", ") || supporter.email || "—";
}

/** The portal page of one gift (the donor signs in first if needed): where a card is updated, a gift changed. */
export const giftPageUrl = (baseUrl: string, organizationSlug: string, donationId: number) =>
  `${baseUrl}${portalPath(organizationSlug, `gifts/${donationId}`)}`;

/** The admin panel's page of a donation (the panel is served under /admin/o/{slug}/). */
export const adminDonationUrl = (baseUrl: string, organizationSlug: string, donationId: number) =>
  `${baseUrl}/admin/o/${encodeURIComponent(organizationSlug)}/donations/${donationId}`;

export interface DonationContext {
  base: BaseModel;
  donation: NonNullable<Awaited<ReturnType<typeof findDonationForEmail>>>["donation"];
  supporter: SupporterRow;
  campaignTitle: string;
  method: NonNullable<Awaited<ReturnType<typeof findDonationForEmail>>>["method"];
}

/**
 * The sender and the donation of an outbox row; null when it is gone or, for a message to the donor,
 * when the supporter was erased or has no address any more.
 */
export async function loadDonationContext(
  tx: Executor,
  row: { organizationId: number; donationId: number | null; supporterId: number | null },
  options: { requireDonorAddress: boolean } = { requireDonorAddress: true },
): Promise<DonationContext | null> {
  if (row.donationId === null) return null;
  // A message to the donor speaks their language; a notice to the organization, its own.
  const base = await loadBaseModel(tx, row.organizationId, options.requireDonorAddress ? row.supporterId : null);
  const found = await findDonationForEmail(tx, row.organizationId, row.donationId);
  if (!base || !found) return null;
  if (options.requireDonorAddress && (found.supporter.eraseDate || !found.supporter.email)) return null;
  return { base, ...found };
}

/** One payment of the organization named in a message's data (`payment_id`). */
export async function loadDataPayment(tx: Executor, organizationId: number, data: unknown) {
  const id = (data as { payment_id?: unknown } | null)?.payment_id;
  if (typeof id !== "number") return undefined;
  const [payment] = await findPaymentRowsByIds(tx, organizationId, [id]);
  return payment;
}

/** What each payment of a recurring gift takes: the gift and the fee the donor covered, summed in cents. */
export const chargeOf = (donation: { amount: number; coveredFee: number }) =>
  fromCents(toCents(donation.amount) + toCents(donation.coveredFee));

/** A sample date `days` from now, for previews. */
export const sampleDate = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
