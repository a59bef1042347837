import type { Db } from "../../db/client.js";
import { notFound } from "../../http/errors.js";
import { parseId } from "../../http/ids.js";
import { optionalDateBound, parseOrder } from "../../http/pagination.js";
import { campaignToWire } from "../campaigns/campaigns.service.js";
import { donationToWire } from "../donations/donations.service.js";
import { paymentToWire } from "../payments/payments.service.js";
import type { Scope } from "../scope.js";
import { supporterToWire } from "../supporters/supporters.service.js";
import { type CheckoutRecord, findCheckoutRecord, listCheckoutRecords } from "./checkouts.repo.js";
import type { CheckoutListQuery, CheckoutWire } from "./checkouts.schemas.js";

export function checkoutToWire(record: CheckoutRecord): CheckoutWire {
  const { checkout, campaign, supporter, donation, payment, paymentMethod } = record;
  return {
    id: checkout.id,
    create_date: checkout.createDate.toISOString(),
    update_date: checkout.updateDate.toISOString(),
    campaign: campaign ? campaignToWire(campaign) : null,
    supporter: supporter ? supporterToWire(supporter) : null,
    donation: donation ? donationToWire(donation) : null,
    payment: payment ? paymentToWire(payment, paymentMethod) : null,
    state: checkout.state as CheckoutWire["state"],
    amount: checkout.amount,
    completed_date: checkout.completedDate?.toISOString() ?? null,
    frequency: checkout.frequency as CheckoutWire["frequency"],
    cost_example_quantity: checkout.costExampleQuantity,
    payment_method_processor: paymentMethod?.processor ?? null,
    payment_method_label: paymentMethod?.label ?? null,
    payment_method_id: paymentMethod?.id ?? null,
  };
}

export async function listCheckouts(db: Db, scope: Scope, query: CheckoutListQuery) {
  const { rows, count } = await listCheckoutRecords(
    db,
    scope,
    {
      q: query.q,
      state: query.state,
      campaignId: query.campaign_id,
      supporterId: query.supporter_id,
      frequency: query.frequency,
      createDateFrom: optionalDateBound("create_date_from", query.create_date_from),
      createDateTo: optionalDateBound("create_date_to", query.create_date_to),
      updateDateFrom: optionalDateBound("update_date_from", query.update_date_from),
      updateDateTo: optionalDateBound("update_date_to", query.update_date_to),
    },
    parseOrder(query.order),
    { limit: query.limit, offset: query.offset },
  );
  return { items: rows.map(checkoutToWire), count };
}

export async function getCheckout(db: Db, scope: Scope, rawId: string) {
  const record = await findCheckoutRecord(db, scope, parseId(rawId, "Checkout"));
  if (!record) throw notFound("Checkout");
  return checkoutToWire(record);
}
