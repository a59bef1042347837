import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { Campaign, CampaignList, CampaignListQuery } from "./campaigns.schemas.js";
import { getCampaign, listCampaigns } from "./campaigns.service.js";

export function campaignRoutes(app: FastifyInstance, db: Db) {
  registerCollectionRoutes<CampaignListQuery>(app, db, {
    collection: "campaigns",
    singular: "campaign",
    permission: "campaigns:read",
    item: Campaign,
    listQuery: CampaignListQuery,
    listResponse: CampaignList,
    list: listCampaigns,
    retrieve: getCampaign,
  });
}
