import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { optionalDateBound, parseOrder } from "../../db/list-query.js";
import { notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { type DonationRow, findDonationRow, listDonationRows } from "./donations.repo.js";
import type { DonationListQuery, DonationWire } from "./donations.schemas.js";

export function donationToWire(row: DonationRow): DonationWire {
  return {
    id: row.id,
    supporter_id: row.supporterId,
    campaign_id: row.campaignId,
    code: row.code,
    state: row.state as DonationWire["state"],
    amount: row.amount,
    currency: row.currency,
    receipt_url: row.receiptUrl,
    frequency: row.frequency as DonationWire["frequency"],
    note: row.note,
    completed_date: row.completedDate?.toISOString() ?? null,
    create_date: row.createDate.toISOString(),
    update_date: row.updateDate.toISOString(),
    device: row.device as DonationWire["device"],
    tags: row.tags,
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
      createDateFrom: optionalDateBound("create_date_from", query.create_date_from),
      createDateTo: optionalDateBound("create_date_to", query.create_date_to),
      updateDateFrom: optionalDateBound("update_date_from", query.update_date_from),
      updateDateTo: optionalDateBound("update_date_to", query.update_date_to),
      completedDateFrom: optionalDateBound("completed_date_from", query.completed_date_from),
      completedDateTo: optionalDateBound("completed_date_to", query.completed_date_to),
    },
    parseOrder(query.order),
    { limit: query.limit, offset: query.offset },
  );
  return { items: rows.map(donationToWire), count };
}

export async function getDonation(db: Db, scope: Scope, rawId: string) {
  const row = await findDonationRow(db, scope, parseId(rawId, "Donation"));
  if (!row) throw notFound("Donation");
  return donationToWire(row);
}
