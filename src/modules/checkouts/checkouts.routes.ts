import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { Checkout, CheckoutList, CheckoutListQuery } from "./checkouts.schemas.js";
import { getCheckout, listCheckouts } from "./checkouts.service.js";

export function checkoutRoutes(app: FastifyInstance, db: Db) {
  registerCollectionRoutes<CheckoutListQuery>(app, db, {
    collection: "checkouts",
    singular: "checkout",
    permission: "checkouts:read",
    item: Checkout,
    listQuery: CheckoutListQuery,
    listResponse: CheckoutList,
    list: listCheckouts,
    retrieve: getCheckout,
  });
}
