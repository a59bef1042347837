import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { createUpdateBounds, pageOf, parseOrder } from "../../db/list-query.js";
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
      ...createUpdateBounds(query),
    },
    parseOrder(query.order),
    pageOf(query),
  );
  return { items: rows, count };
}

export async function getCheckout(db: Db, scope: Scope, rawId: string) {
  const checkout = await findCheckoutWire(db, scope, parseId(rawId, "Checkout"));
  if (!checkout) throw notFound("Checkout");
  return checkout;
}
