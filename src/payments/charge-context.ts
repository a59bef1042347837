import type { Executor } from "../db/client.js";
import { findCampaign } from "../modules/giving/checkout-flow.repo.js";
import { findOrganizationById } from "../modules/organizations/organizations.repo.js";
import type { ChargeContext } from "./processors/processor.js";

/**
 * What a charge is for, told to the processor for its fraud screening and dashboard: "Donation to
 * Org (Campaign)", the ids that lead back to Donata's records, and the name for the donor's bank
 * statement. Read from the rows the charge was recorded with, so a retry under the same key sends
 * the same.
 */
export async function chargeContextOf(
  db: Executor,
  kind: "initial" | "renewal",
  ids: { organizationId: number; campaignId: number | null; donationId: number | null; checkoutId: number | null },
): Promise<ChargeContext> {
  const organization = await findOrganizationById(db, ids.organizationId);
  const campaign = ids.campaignId === null ? undefined : await findCampaign(db, ids.organizationId, ids.campaignId);
  const name = organization?.name ?? "";
  const what = kind === "renewal" ? "Recurring donation" : "Donation";
  return {
    description: `${what} to ${name}${campaign ? ` (${campaign.title})` : ""}`,
    statementName: name,
    ...ids,
  };
}
