import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { Supporter, SupporterList, SupporterListQuery } from "./supporters.schemas.js";
import { getSupporter, listSupporters } from "./supporters.service.js";

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
}
