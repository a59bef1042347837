import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { optionalDateBound, parseOrder } from "../../db/list-query.js";
import { notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { findCheckoutWire, listCheckoutRecords } from "./checkouts.repo.js";
import type { CheckoutListQuery } from "./checkouts.schemas.js";

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
  return { items: rows, count };
}

export async function getCheckout(db: Db, scope: Scope, rawId: string) {
  const checkout = await findCheckoutWire(db, scope, parseId(rawId, "Checkout"));
  if (!checkout) throw notFound("Checkout");
  return checkout;
}
