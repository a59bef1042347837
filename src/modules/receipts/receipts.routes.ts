import type { FastifyInstance } from "fastify";
import type { Permission } from "../../auth/permissions.js";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { mayOpenLink } from "../documents/document-access.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { Receipt, ReceiptList, ReceiptListQuery } from "./receipts.schemas.js";
import { getReceipt, listReceiptsPage } from "./receipts.service.js";

/** The list's scope is the request's token context: its permissions decide whether links show. */
const mayOpen = (scope: Scope) => {
  const permissions = (scope as Scope & { permissions?: readonly string[] }).permissions ?? [];
  return mayOpenLink("receipt_url", (permission: Permission) => permissions.includes(permission));
};

/**
 * `GET /api/v1/receipts/` and `/api/v1/receipts/{id}`: the organization's issued receipts and
 * statements (donations:read), for an accounting or CRM sync; `receipt.issued` / `receipt.voided`
 * events say when to read again.
 */
export function receiptRoutes(app: FastifyInstance, db: Db, links: DocumentLinks) {
  registerCollectionRoutes<ReceiptListQuery>(app, db, {
    collection: "receipts",
    singular: "receipt",
    // retrieve_receipt is the donation's printable receipt page (/documents/receipts/…).
    retrieveOperationId: "retrieve_issued_receipt",
    permission: "donations:read",
    item: Receipt,
    listQuery: ReceiptListQuery,
    listResponse: ReceiptList,
    list: (database, scope, query) => listReceiptsPage(database, links, scope, query, mayOpen(scope)),
    retrieve: (database, scope, id) => getReceipt(database, links, scope, id, mayOpen(scope)),
  });
}
