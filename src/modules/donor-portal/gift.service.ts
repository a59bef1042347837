import type { Db } from "../../db/client.js";
import { findDonation } from "../donations/donations.repo.js";
import { findCampaign } from "../giving/checkout-flow.repo.js";
import { findPaymentMethod } from "../payment-methods/payment-methods.repo.js";
import { findSupporter } from "../supporters/supporters.repo.js";
import type { DonorSession } from "./donor-session.js";
import type { DonorGiftView } from "./gift.page.js";
import { PortalRefusal } from "./portal-i18n.js";

const giftNotFound = () => new PortalRefusal("not_found", "portal.errors.gift_not_found");

/**
 * A gift of the signed-in donor: a donation of the session's organization whose supporter has the
 * session's email (case-insensitive) and is not erased. Anything else, another organization's or
 * another donor's, is not found (404), never told apart.
 */
export async function loadDonorGift(db: Db, session: DonorSession, rawId: string): Promise<DonorGiftView> {
  if (!/^[1-9]\d{0,14}$/.test(rawId)) throw giftNotFound();
  const donation = await findDonation(db, session.organizationId, Number(rawId));
  if (!donation || donation.state === "draft") throw giftNotFound();
  const supporter = await findSupporter(db, session.organizationId, donation.supporterId);
  if (!supporter?.email || supporter.eraseDate || supporter.email.toLowerCase() !== session.email) {
    throw giftNotFound();
  }
  const [campaign, method] = await Promise.all([
    findCampaign(db, session.organizationId, donation.campaignId),
    findPaymentMethod(db, session.organizationId, donation.paymentMethodId),
  ]);
  return { donation, campaign, method };
}
