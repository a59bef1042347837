import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { Payment, PaymentList, PaymentListQuery } from "./payments.schemas.js";
import { getPayment, listPayments } from "./payments.service.js";

export function paymentRoutes(app: FastifyInstance, db: Db) {
  registerCollectionRoutes<PaymentListQuery>(app, db, {
    collection: "payments",
    singular: "payment",
    permission: "payments:read",
    item: Payment,
    listQuery: PaymentListQuery,
    listResponse: PaymentList,
    list: listPayments,
    retrieve: getPayment,
  });
}
