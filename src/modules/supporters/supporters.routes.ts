import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { registerWriteRoutes } from "../../http/write-routes.js";
import { Supporter, SupporterInput, SupporterList, SupporterListQuery, SupporterPatch } from "./supporters.schemas.js";
import { createSupporter, getSupporter, listSupporters, updateSupporter } from "./supporters.service.js";

export function supporterRoutes(app: FastifyInstance, db: Db) {
  registerCollectionRoutes<SupporterListQuery>(app, db, {
    collection: "supporters",
    singular: "supporter",
    permission: "supporters:read",
    item: Supporter,
    listQuery: SupporterListQuery,
    listResponse: SupporterList,
    list: listSupporters,
    retrieve: getSupporter,
  });
  registerWriteRoutes(app, db, {
    collection: "supporters",
    singular: "supporter",
    permission: "supporters:write",
    item: Supporter,
    createBody: SupporterInput,
    updateBody: SupporterPatch,
    create: (scope, body, key) => createSupporter(db, scope, body as SupporterInput, key),
    update: (scope, id, body) => updateSupporter(db, scope, id, body as SupporterPatch),
  });
}
