import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { createUpdateBounds, optionalDateBound, pageOf, parseOrder } from "../../db/list-query.js";
import { notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { type DonationRow, donationWireRow, findDonationRow, listDonationRows } from "./donations.repo.js";
import type { DonationListQuery, DonationWire } from "./donations.schemas.js";

export function donationToWire(row: DonationRow): DonationWire {
  return donationWireRow.fromRow(row);
}

/**
 * A donation kept in a stored answer (an Idempotency-Key's outcome), replayed in today's shape: the
 * fields added since it was stored take their empty value.
 */
export function storedDonationToWire(stored: DonationWire): DonationWire {
  return {
    ...stored,
    tribute: stored.tribute ?? null,
    answers: stored.answers ?? [],
    external_id: stored.external_id ?? null,
    activation: stored.activation ?? null,
  };
}

export async function listDonations(db: Db, scope: Scope, query: DonationListQuery) {
  const { rows, count } = await listDonationRows(
    db,
    scope,
    {
      q: query.q,
      state: query.state,
      frequency: query.frequency,
      campaignId: query.campaign_id,
      supporterId: query.supporter_id,
      tag: query.tag,
      externalId: query.external_id,
      ...createUpdateBounds(query),
      completedDateFrom: optionalDateBound("completed_date_from", query.completed_date_from),
      completedDateTo: optionalDateBound("completed_date_to", query.completed_date_to),
    },
    parseOrder(query.order),
    pageOf(query),
  );
  return { items: rows.map(donationToWire), count };
}

export async function getDonation(db: Db, scope: Scope, rawId: string) {
  const row = await findDonationRow(db, scope, parseId(rawId, "Donation"));
  if (!row) throw notFound("Donation");
  return donationToWire(row);
}
